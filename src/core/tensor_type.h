// Tensor element types, numbered as in GGML/GGUF (ggml.h's enum ggml_type
// at llama.cpp b7847) so files interoperate. Every type GGML defines is
// known here with its block geometry, so any valid GGUF file can be read
// and sized; only some of them can be run (IsRunnable). Quantized types
// store fixed-size blocks of `block_size` elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace h2o {

// Ids missing here (4, 5, 31-33, 36-38) were retired from GGML and are
// rejected in files, as llama.cpp does.
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

struct TensorTypeTraits {
  std::string_view name;  // GGML's name: "f32", "q8_0", "q4_K", "iq2_xxs", ...
  int64_t block_size;     // elements per block (1 for plain numbers)
  size_t block_bytes;     // bytes per block
  bool runnable;          // h2o has kernels for it (see IsRunnable)
};

// Traits of any type GGML defines; nullopt for an id that was retired or
// never defined.
std::optional<TensorTypeTraits> GetTensorTypeTraits(uint32_t raw_type);
TensorTypeTraits TraitsOf(TensorType type);  // type must be a defined GGML type (checked)

// GGML's name for a raw id, retired ids included ("q4_2" for 4), so an error
// about an old file still says what it holds; empty for an id never defined.
std::string_view GgmlTypeName(uint32_t raw_type);

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t RowBytes(TensorType type, int64_t n);

// Whether h2o can run weights of this type: dequantize, dot and quantize
// them (kernels/quant.h). The others can be opened and inspected only.
bool IsRunnable(TensorType type);

// The runnable types, in a fixed order (floats, then GGML id order).
std::span<const TensorType> RunnableTypes();

// "f32, f16, bf16, q4_0, ..." for error messages.
std::string RunnableTypeNames();

// Ok for a runnable type; otherwise the one-line error "tensor 'NAME' has
// type iq2_xxs, which h2o cannot run (runs: f32, f16, ...)".
Status CheckRunnable(std::string_view tensor_name, TensorType type);

// Parses the GGML name of a runnable type ("f32", "q8_0", "q4_K", ...); every
// one of them can also be quantized to (kernels::QuantizeRow).
std::optional<TensorType> ParseTensorType(std::string_view name);

// Block sizes of the quantized types: 32 elements for the "legacy" types
// (q4_0 ... q8_0), 256 for a K-quant super-block (GGML's QK_K).
inline constexpr int64_t kQ8_0BlockSize = 32;
inline constexpr int64_t kQ4_0BlockSize = 32;
inline constexpr int64_t kQBlockSize = 32;
inline constexpr int64_t kQKSuperBlockSize = 256;

}  // namespace h2o
