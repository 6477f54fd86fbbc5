// FNV-1a, 64 bits: a fast, stable hash of bytes for names and checksums
// that must not change between builds (state files, their names). Not for
// anything an adversary chooses to collide.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h2o {

struct Fnv1a64 {
  uint64_t h = 0xcbf29ce484222325ull;
  void Add(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  }
  template <typename T>
  void AddValue(const T& v) {
    Add(&v, sizeof(v));
  }
};

}  // namespace h2o
