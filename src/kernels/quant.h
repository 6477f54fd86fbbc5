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

// An activation vector quantized for the integer dot products with Q8_0 and
// Q4_0 weights (GGML's vec_dot_type idea, with an fp32 scale): 32 elements,
// d = max |x| / 127 and qs[i] = x[i] / d rounded to nearest (ties to even),
// so |x[i] - d * qs[i]| <= d / 2 up to float rounding of x[i] / d. sum is
// sum_i qs[i], which lets Q4_0 multiply its unsigned codes q and subtract
// 8 * sum afterwards instead of forming q - 8 per element.
struct BlockQ8Act {
  float d;
  int32_t sum;
  int8_t qs[32];
};
static_assert(sizeof(BlockQ8Act) == 40 && sizeof(BlockQ8Act) % sizeof(float) == 0);

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

// Whether `type` has an integer dot product against a quantized activation
// (DotRowQ8): Q8_0 and Q4_0. MatVec and MatMul use it for such weights.
bool HasDotRowQ8(TensorType type);

// Quantizes x[0, n) into n / 32 blocks of dst. Requires n % 32 == 0
// (checked). Every backend writes identical blocks.
void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n);

// Returns sum over blocks of d_w * d_x * (exact int32 sum of q_w * q_x):
// the dot product of the stored row with the quantized activation, which
// differs from DotRow(type, row, x, n) by at most sum_i |w[i]| * d_x / 2 of
// the block of i (the activation's quantization error) plus float rounding
// of the per-block sums. Requires HasDotRowQ8(type) and n % 32 == 0
// (checked).
float DotRowQ8(TensorType type, const void* row, const BlockQ8Act* x, int64_t n);

}  // namespace h2o::kernels
