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

// Q4_1: 32 elements, x = d * q + m with q a 4-bit code (nibbles placed as
// in Q4_0). d and m are IEEE halves.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: 32 elements, x = d * (q - 16) with q a 5-bit code: the low four bits
// are placed as in Q4_0, bit 4 of element j is bit j of qh (little-endian
// uint32).
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1: 32 elements, x = d * q + m with q as in Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_1) == 24);

// The K-quants: super-blocks of 256 elements split into sub-blocks of 16 or
// 32, each with a small integer scale (and min) that multiplies the
// super-block's half-precision d (and dmin). In the 2-bit fields of Q2_K and
// Q3_K, element e = 128 h + 32 k + l (h < 2, k < 4, l < 32) is bits 2k, 2k+1
// of qs[32 h + l]; in the nibble fields of Q4_K and Q5_K, element
// e = 64 h + 32 k + l (h < 4, k < 2) is nibble k (0 low, 1 high) of
// qs[32 h + l].

// Q2_K: sub-block s = e / 16 has x = d * (scales[s] & 15) * q
// - dmin * (scales[s] >> 4), q the 2-bit code (0..3).
struct BlockQ2_K {
  uint8_t scales[16];
  uint8_t qs[64];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// Q3_K: x = d * (sc_s - 32) * (q - 4 + 4 * high bit), s = e / 16, q the 2-bit
// code; the high bit of e is bit e / 32 of hmask[e % 32]. sc_s is 6 bits:
// the low four are the low nibble of scales[s] (s < 8) or the high nibble
// of scales[s - 8], the top two are bits 2 (s / 4), 2 (s / 4) + 1 of
// scales[8 + s % 4].
struct BlockQ3_K {
  uint8_t hmask[32];
  uint8_t qs[64];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// Q4_K: sub-block s = e / 32 has x = d * sc_s * q - dmin * m_s with q the
// nibble; sc_s, m_s are 6 bits: for s < 4 the low six bits of scales[s] and
// scales[s + 4]; for s >= 4 the nibbles of scales[s + 4] (low: sc, high: m)
// below the top two bits of scales[s - 4] (sc) and scales[s] (m).
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q5_K: as Q4_K with q = nibble + 16 * (bit e / 32 of qh[e % 32]).
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
static_assert(sizeof(BlockQ5_K) == 176);

// Q6_K: x = d * scales[e / 16] * (q - 32) with q 6 bits. For e = 128 h +
// 32 k + l: the low four bits are nibble k / 2 of ql[64 h + 32 (k % 2) + l],
// the top two are bits 2k, 2k+1 of qh[32 h + l].
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// An activation vector quantized for the integer dot products with the
// 32-element types (GGML's vec_dot_type idea, with an fp32 scale): 32
// elements, d = max |x| / 127 and qs[i] = x[i] / d rounded to nearest (ties
// to even), so |x[i] - d * qs[i]| <= d / 2 up to float rounding of x[i] / d.
// sum is sum_i qs[i], which lets Q4_0 and Q5_0 multiply their unsigned codes
// q and subtract 8 * sum (16 * sum) afterwards instead of forming q - 8 per
// element, and Q4_1 and Q5_1 add m * d * sum for their offset.
struct BlockQ8Act {
  float d;
  int32_t sum;
  int8_t qs[32];
};
static_assert(sizeof(BlockQ8Act) == 40 && sizeof(BlockQ8Act) % sizeof(float) == 0);

// The same for the K-quants, over a whole super-block (llama.cpp's q8_K):
// 256 elements with one d = max |x| / 127, codes rounded as above, and the
// sums of the codes of each 16 elements (|sum| <= 2032), which carry the
// mins and code offsets of every sub-block. One scale per super-block keeps
// the whole super-block's dot an exact int32 sum (at most 256 * 32 * 127 *
// 128 < 2^27 in magnitude, q6_K's worst case), scaled once.
struct BlockQ8KAct {
  float d;
  int16_t bsums[16];
  int8_t qs[256];
};
static_assert(sizeof(BlockQ8KAct) == 292 && sizeof(BlockQ8KAct) % sizeof(float) == 0);

// Which quantized activation a weight type's integer dot takes.
enum class ActFormat {
  kNone,  // the float types: DotRow with float x
  kQ8,    // BlockQ8Act (q8_0, q4_0, q4_1, q5_0, q5_1)
  kQ8K,   // BlockQ8KAct (the K-quants)
};

// Writes n elements of src as `type` into dst (RowBytes(type, n) bytes).
// Requires a runnable type and n a multiple of its block size (checked).
// q8_0, q4_0, q4_1, q5_0 and q5_1 are quantized exactly as GGML's
// quantize_row_*_ref (scales computed in fp32, stored as fp16). The
// K-quants use a simpler quantizer than GGML's scale search, with these
// guarantees (t = d * sc_s the stored step of an element's sub-block):
//  - q2_K, q4_K, q5_K (x = t q - dmin m_s): each sub-block's range
//    [min(0, min x), max x] lies inside its grid [-dmin m_s, -dmin m_s +
//    t (2^bits - 1)] (mins and scales rounded up, not to nearest), so
//    |x - x'| <= t / 2; the step is at most (range + dmin) / (2^bits - 1)
//    + d.
//  - q3_K, q6_K (x = t c, c in [-2^(bits-1), 2^(bits-1) - 1]): the element
//    of largest magnitude maps to the code -2^(bits-1) or near it (scale
//    rounded up), so |x - x'| <= t / 2 for values of its sign and <= t on
//    the other side, where the grid stops one step short; |t| <= amax /
//    2^(bits-1) + d.
// (Up to float rounding: 1e-6 relative to the sub-block's magnitude.)
void QuantizeRow(TensorType type, const float* src, void* dst, int64_t n);

// Reads n elements of `type` from src into dst. Requires a runnable type
// and n a multiple of its block size (checked). The values are GGML's
// dequantize_row_* values bit for bit: each is computed as in the layout
// comments above, in float, in GGML's order of operations (the sub-block
// step d * sc first, then times the code, then the min added or
// subtracted), so files llama.cpp writes decode exactly as there.
void DequantizeRow(TensorType type, const void* src, float* dst, int64_t n);

// Returns sum_i w[i] * x[i] where w is the row stored as `type`. Accumulates
// in float over several independent partial sums (and per block for the
// quantized types), so the rounding error stays well under n * FLT_EPSILON
// * sum_i |w[i] x[i]|. Requires n to be a multiple of the block size.
float DotRow(TensorType type, const void* row, const float* x, int64_t n);

// The activation format of `type`'s integer dot (kNone for the float
// types). MatVec and MatMul use the integer dot for every quantized type.
// Requires a runnable type (checked).
ActFormat ActivationFormat(TensorType type);
inline bool HasDotRowQ8(TensorType type) { return ActivationFormat(type) == ActFormat::kQ8; }
inline bool HasDotRowQ8K(TensorType type) { return ActivationFormat(type) == ActFormat::kQ8K; }

// Quantizes x[0, n) into n / 32 blocks of dst. Requires n % 32 == 0
// (checked). Every backend writes identical blocks.
void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n);

// Returns sum over blocks of d_w * d_x * (exact int32 sum of q_w * q_x)
// (plus m_w * d_x * sum for the types with a min): the dot product of the
// stored row with the quantized activation, which differs from
// DotRow(type, row, x, n) by at most sum_i |w[i]| * d_x / 2 of the block of
// i (the activation's quantization error) plus float rounding of the
// per-block sums. Requires HasDotRowQ8(type) and n % 32 == 0 (checked).
float DotRowQ8(TensorType type, const void* row, const BlockQ8Act* x, int64_t n);

// Quantizes x[0, n) into n / 256 blocks of dst. Requires n % 256 == 0
// (checked). Every backend writes identical blocks.
void QuantizeActivationK(const float* x, BlockQ8KAct* dst, int64_t n);

// Returns sum over super-blocks of d_x * (d_w * (exact int32 sum over
// sub-blocks of sc_s * sum q_w q_x) - dmin_w * (exact int32 sum of
// m_s * bsum_s)): the dot product of the stored row with the quantized
// activation, which differs from DotRow(type, row, x, n) by at most
// sum_i |w[i]| * d_x / 2 of the super-block of i (the activation's
// quantization error, coarser than BlockQ8Act's since d_x covers 256
// elements) plus float rounding of the per-super-block terms. Requires
// HasDotRowQ8K(type) and n % 256 == 0 (checked).
float DotRowQ8K(TensorType type, const void* row, const BlockQ8KAct* x, int64_t n);

}  // namespace h2o::kernels
