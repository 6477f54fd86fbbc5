#include "core/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace h2o {
namespace {

Status Failed(const std::string& path, const char* what, int err) {
  return Status::Error(
      std::string(path).append(": ").append(what).append(": ").append(std::strerror(err)));
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return Failed(path, "cannot write file", errno);
  const bool written = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const int write_errno = errno;
  // fclose flushes, so its failure is a write failure too.
  if (std::fclose(f) != 0 || !written) {
    const int err = written ? errno : write_errno;
    std::remove(tmp.c_str());
    return Failed(path, "write error", err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Failed(path, "cannot write file", err);
  }
  return Status::Ok();
}

}  // namespace h2o
