// Internal to the gguf module: decodes and validates the bytes of a whole
// GGUF file. Every length and offset is checked against `size` before it is
// used, so malformed input yields an error, never a read out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "gguf/tensor_info.h"
#include "gguf/value.h"

namespace h2o::gguf::internal {

struct ParsedFile {
  uint32_t version = 0;
  uint32_t alignment = 0;
  uint64_t data_offset = 0;  // start of the data section in the file
  std::vector<KeyValue> metadata;
  std::vector<TensorInfo> tensors;  // data pointers point into [data, data + size)
};

// Errors are one line without a file name (the caller prefixes it).
Result<ParsedFile> ParseFile(const uint8_t* data, size_t size);

}  // namespace h2o::gguf::internal
