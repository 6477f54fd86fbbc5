// AVX2 kernels of q4_1, q5_0 and q5_1, the 32-element types with a fifth
// bit or a min. Compiled and linked under the rules of simd_avx2.cc.
//
// A block's codes are one register of 32 unsigned bytes in element order
// (low nibbles are elements 0..15, high nibbles 16..31, bit 4 from qh);
// the integer dot multiplies them with the activation codes in maddubs
// (unsigned x signed, pair sums <= 2 * 31 * 127 < 2^15) and fixes the
// offset or min afterwards, as the reference's integer form does.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2_common.h"
#include "kernels/dispatch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

__m256i Nibbles32(const uint8_t (&qs)[16]) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(raw, nibble);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), nibble);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// 0x10 in byte j where bit j of qh (little-endian) is set: each byte gets
// the qh byte holding its bit, then is tested against its own bit.
__m256i FifthBits(const uint8_t (&qh)[4]) {
  uint32_t bits = 0;
  std::memcpy(&bits, qh, sizeof(bits));
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                           2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Unsigned codes and their offset (code - kOffset is the reference's code).
struct Q4_1Codes {
  static constexpr int kOffset = 0;
  static __m256i Of(const BlockQ4_1& b) { return Nibbles32(b.qs); }
};
struct Q5_0Codes {
  static constexpr int kOffset = 16;
  static __m256i Of(const BlockQ5_0& b) {
    return _mm256_or_si256(Nibbles32(b.qs), FifthBits(b.qh));
  }
};
struct Q5_1Codes {
  static constexpr int kOffset = 0;
  static __m256i Of(const BlockQ5_1& b) {
    return _mm256_or_si256(Nibbles32(b.qs), FifthBits(b.qh));
  }
};

// The block's int32 sum of (code - offset) * x_code over 8 lanes; the
// offset term offset * sum(x) is spread as offset / 8 * sum per lane.
template <typename Codes, typename Block>
__m256i BlockDot(const Block& block, const BlockQ8Act& x) {
  static_assert(Codes::kOffset % 8 == 0);
  const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
  const __m256i lanes =
      _mm256_madd_epi16(_mm256_maddubs_epi16(Codes::Of(block), xq), _mm256_set1_epi16(1));
  if constexpr (Codes::kOffset == 0) return lanes;
  return _mm256_sub_epi32(lanes, _mm256_set1_epi32(Codes::kOffset / 8 * x.sum));
}

// y = step * (code - offset) - min_term with the reference's step and
// min term: d and 0 without a min, d and -m with one (d q + m).
template <typename Codes, typename Block, bool kHasMin>
void Dequantize(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const Block*>(src);
  for (int64_t b = 0; b < n / 32; ++b, dst += 32) {
    const float step = HalfToFloat(blocks[b].d);
    float offset = 0.0f;
    if constexpr (kHasMin) offset = -HalfToFloat(blocks[b].m);
    __m256 c[4];
    Int8x32ToFloats(_mm256_sub_epi8(Codes::Of(blocks[b]), _mm256_set1_epi8(Codes::kOffset)), c);
    StoreAffine16(c, 0, step, offset, dst);
    StoreAffine16(c, 2, step, offset, dst + 16);
  }
}

template <typename Codes, typename Block, bool kHasMin>
TypeKernels KernelsOf(QuantizeRowFn quantize) {
  return {
      quantize,
      Dequantize<Codes, Block, kHasMin>,
      [](const void* row, const float* x, int64_t n) {
        return DotViaDequantize<32, sizeof(Block), 256>(row, x, n,
                                                        Dequantize<Codes, Block, kHasMin>);
      },
      [](const void* row, const BlockQ8Act* x, int64_t n) {
        return DotBlocksQ8<Block, kHasMin>(
            row, x, n, [](const Block& b, const BlockQ8Act& xb) { return BlockDot<Codes>(b, xb); });
      },
  };
}

}  // namespace

TypeKernels Q4_1Kernels() { return KernelsOf<Q4_1Codes, BlockQ4_1, true>(ref::QuantizeRowQ4_1); }
TypeKernels Q5_0Kernels() { return KernelsOf<Q5_0Codes, BlockQ5_0, false>(ref::QuantizeRowQ5_0); }
TypeKernels Q5_1Kernels() { return KernelsOf<Q5_1Codes, BlockQ5_1, true>(ref::QuantizeRowQ5_1); }

}  // namespace h2o::kernels::avx2
