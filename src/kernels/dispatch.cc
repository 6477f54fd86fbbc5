#include "kernels/dispatch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/status.h"

namespace h2o::kernels {

const TypeKernels& KernelTable::For(TensorType type) const {
  switch (type) {
    case TensorType::kF32:
      return f32;
    case TensorType::kF16:
      return f16;
    case TensorType::kBF16:
      return bf16;
    case TensorType::kQ8_0:
      return q8_0;
    case TensorType::kQ4_0:
      return q4_0;
  }
  CheckFailed("KernelTable::For: unsupported tensor type", __FILE__, __LINE__);
}

std::vector<const KernelTable*> AvailableKernels() {
  // SIMD backends go in front of the reference, each guarded by a compile
  // flag (was it built?) and a CPUID check (can this machine run it?).
  return {&RefKernels()};
}

const KernelTable& SelectKernels(const char* env_value) {
  const std::vector<const KernelTable*> available = AvailableKernels();
  if (env_value == nullptr || env_value[0] == '\0' || std::strcmp(env_value, "auto") == 0) {
    return *available.front();
  }
  for (const KernelTable* table : available) {
    if (std::strcmp(table->name, env_value) == 0) return *table;
  }
  std::fprintf(stderr, "h2o: H2O_KERNELS=%s is not an available kernel backend; using %s\n",
               env_value, available.front()->name);
  return *available.front();
}

const KernelTable& ActiveKernels() {
  static const KernelTable& active = SelectKernels(std::getenv("H2O_KERNELS"));
  return active;
}

}  // namespace h2o::kernels
