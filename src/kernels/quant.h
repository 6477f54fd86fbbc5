// Row conversion between float and the stored tensor types, and the dot
// product of a stored row with a float vector (the inner loop of MatVec).
// Block layouts are GGML's, byte for byte, so GGUF tensor data is used in
// place. All functions route through ActiveKernels() and are thread-safe
// (they touch only their arguments).
#pragma once

#include <cstdint>

#include "core/tensor_type.h"

namespace h2o::kernels {

// Q8_0: 32 elements, x[i] = d * qs[i]. d is an IEEE half.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQ8_0BlockSize];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0: 32 elements, x = d * (q - 8) with q a 4-bit code. Element j (0..15)
// is the low nibble of qs[j]; element j + 16 is the high nibble of qs[j].
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQ4_0BlockSize / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Writes n elements of src as `type` into dst (RowBytes(type, n) bytes).
// Requires n to be a multiple of the type's block size (checked). Quantized
// types are quantized exactly as GGML's quantize_row_q8_0_ref /
// quantize_row_q4_0_ref (the scale is computed in fp32 and stored as fp16).
void QuantizeRow(TensorType type, const float* src, void* dst, int64_t n);

// Reads n elements of `type` from src into dst. Requires n to be a multiple
// of the type's block size (checked).
void DequantizeRow(TensorType type, const void* src, float* dst, int64_t n);

// Returns sum_i w[i] * x[i] where w is the row stored as `type`. Accumulates
// in float over several independent partial sums (and per block for the
// quantized types), so the rounding error stays well under n * FLT_EPSILON
// * sum_i |w[i] x[i]|. Requires n to be a multiple of the block size.
float DotRow(TensorType type, const void* row, const float* x, int64_t n);

}  // namespace h2o::kernels
