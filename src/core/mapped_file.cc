#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace h2o {
namespace {

Status ErrnoError(const std::string& path, const char* what) {
  return Status::Error(path + ": " + what + " (" + std::strerror(errno) + ")");
}

}  // namespace

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "cannot open");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status status = ErrnoError(path, "cannot stat");
    ::close(fd);
    return status;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      Status status = ErrnoError(path, "cannot map");
      ::close(fd);
      return status;
    }
    data = static_cast<const uint8_t*>(p);
  }
  // The mapping keeps the file's contents reachable; the descriptor is not needed.
  ::close(fd);
  return std::unique_ptr<MappedFile>(new MappedFile(path, data, size));
}

void MappedFile::ReleasePages(const void* p, size_t n) const {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + n) / page * page;
  const auto mapped = reinterpret_cast<uintptr_t>(data_);
  H2O_CHECK(begin >= mapped && begin + n <= mapped + size_);
  // Advice only: where it fails the pages simply stay.
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace h2o
