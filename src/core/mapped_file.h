// A whole file mapped read-only into memory (RAII). The mapping lives as long
// as the MappedFile; pointers into data() are valid until it is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/status.h"

namespace h2o {

class MappedFile {
 public:
  // Maps `path` read-only. Errors (one line, beginning with `path`): the file
  // cannot be opened or stat'ed, is not a regular file, or cannot be mapped.
  // An empty file maps successfully with size() == 0 and data() == nullptr.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Immutable after Open, so concurrent reads from any thread are safe.
  // Another process truncating the file while it is mapped is not guarded
  // against (the OS would raise SIGBUS on access).
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Lets the OS drop the memory pages wholly inside [p, p + n), a range of
  // data(), from this process: the bytes stay readable (a later read maps
  // them from the file again), but bytes copied elsewhere (weights repacked
  // at load) no longer count twice in resident memory.
  void ReleasePages(const void* p, size_t n) const;

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace h2o
