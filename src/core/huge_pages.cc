#include "core/huge_pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace h2o {

Result<HugePageBuffer> HugePageBuffer::Allocate(size_t bytes, bool advise) {
  H2O_CHECK(bytes > 0);
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  // One huge page more, to start on a boundary.
  const size_t mapping_bytes = rounded + kHugePageBytes;
  void* p =
      mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status::Error("cannot map " + std::to_string(mapping_bytes) + " bytes (" +
                         std::strerror(errno) + ")");
  }
  HugePageBuffer b;
  b.mapping_ = static_cast<uint8_t*>(p);
  b.mapping_bytes_ = mapping_bytes;
  const auto address = reinterpret_cast<uintptr_t>(p);
  b.data_ =
      reinterpret_cast<uint8_t*>((address + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes);
  b.size_ = bytes;
#ifdef MADV_HUGEPAGE
  // Only asked for: THP may be off, or memory too fragmented for it.
  if (advise) (void)madvise(b.data_, rounded, MADV_HUGEPAGE);
#endif
  return b;
}

void HugePageBuffer::AdviseWholePages() const {
#ifdef MADV_HUGEPAGE
  const size_t whole = size_ / kHugePageBytes * kHugePageBytes;
  if (whole > 0) (void)madvise(data_, whole, MADV_HUGEPAGE);
#endif
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept { *this = std::move(other); }

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
}

}  // namespace h2o
