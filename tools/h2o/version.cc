#include "version.h"

#include <fmt/format.h>

#include "build_commit.h"
#include "kernels/dispatch.h"

namespace h2o::cli {
namespace {

std::string Compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

std::string VersionText() {
  std::string available;
  for (const kernels::KernelTable* table : kernels::AvailableKernels()) {
    if (!available.empty()) available += ", ";
    available += table->name;
  }
  std::string text = fmt::format(
      "h2o.cpp {} (commit {})\ncompiler: {}\nSIMD kernels: {} (available: {})", H2O_VERSION,
      H2O_BUILD_COMMIT, Compiler(), kernels::ActiveKernels().name, available);
  text += "\nmatrix kernels:";
  for (const std::string& line : kernels::DescribeMatrixKernels(kernels::ActiveKernels())) {
    text += "\n  " + line;
  }
  return text;
}

}  // namespace h2o::cli
