// Where one tensor lives in a GGUF file and what it holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor_type.h"

namespace h2o::gguf {

struct TensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ne[0] first (the contiguous dimension); 1 to 4 dims, each > 0
  TensorType type;            // any type GGML defines; IsRunnable(type) says if h2o runs it
  uint64_t offset;            // relative to the start of the data section
  size_t nbytes;              // RowBytes(type, dims[0]) * product of the other dims
  // Points into the file's mapping; valid while the File lives. Aligned to
  // the file's alignment relative to the start of the file (the mapping
  // itself starts on a page boundary).
  const uint8_t* data;

  int64_t n_elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

}  // namespace h2o::gguf
