// Tensor element types, numbered as in GGML/GGUF so files interoperate.
// Quantized types store fixed-size blocks of `block_size` elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace h2o {

enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kBF16 = 30,
};

struct TensorTypeTraits {
  std::string_view name;  // GGML's lower-case name: "f32", "q8_0", ...
  int64_t block_size;     // elements per block (1 for plain floats)
  size_t block_bytes;     // bytes per block
};

// Traits of a supported type; nullopt for a GGML type this engine does not
// implement (the raw id is then reported to the user).
std::optional<TensorTypeTraits> GetTensorTypeTraits(uint32_t raw_type);
TensorTypeTraits TraitsOf(TensorType type);  // type must be supported

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t RowBytes(TensorType type, int64_t n);

// Parses "f32", "f16", "bf16", "q8_0", "q4_0".
std::optional<TensorType> ParseTensorType(std::string_view name);

// Sizes of the quantized blocks (GGML layout: fp16 scale, then quants).
inline constexpr int64_t kQ8_0BlockSize = 32;
inline constexpr int64_t kQ4_0BlockSize = 32;

}  // namespace h2o
