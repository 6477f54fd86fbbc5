// The K-quants' codes and scales in AVX2 registers, read the same way for
// every type: a super-block is eight chunks of 32 elements, each one
// register of unsigned codes u (code = u - kOffset), plus int8 scales (and
// mins) per sub-block of 16 or 32 elements. Shared by the row kernels
// (simd_avx2_kquants.cc) and the tiles (gemm_kquant_avx2.cc); internal
// linkage and AVX2 flags, under the rules of simd_avx2.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2_common.h"
#include "kernels/quant.h"

namespace h2o::kernels::avx2 {
namespace {

__m256i Load32(const void* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

// v shifted left by kBits (right for negative kBits) within 16-bit lanes;
// the callers mask to bits that stay inside their byte.
template <int kBits>
__m256i Shift(__m256i v) {
  if constexpr (kBits >= 0) {
    return _mm256_slli_epi16(v, kBits);
  } else {
    return _mm256_srli_epi16(v, -kBits);
  }
}

__m256i Mask(__m256i v, int bits) {
  return _mm256_and_si256(v, _mm256_set1_epi8(static_cast<char>(bits)));
}

// A super-block's int8 scales (and mins) in sub-block order and its two
// super-block scales (dmin = 0 and mins = 0 for types without a min).
struct Scales {
  __m128i scales;
  __m128i mins;
  float d;
  float dmin;
};

// The 6-bit scales and mins of Q4_K and Q5_K: scales[s], mins[s] for s < 4
// are the low six bits of bytes s, s + 4; for s >= 4 the nibbles of byte
// s + 4 below the top bits of bytes s - 4 and s (layout in quant.h).
Scales Scales6(const uint8_t (&bytes)[12], uint16_t d, uint16_t dmin) {
  uint32_t a[3];
  std::memcpy(a, bytes, sizeof(a));
  const uint32_t sc_lo = a[0] & 0x3F3F3F3F;
  const uint32_t mn_lo = a[1] & 0x3F3F3F3F;
  const uint32_t sc_hi = (a[2] & 0x0F0F0F0F) | ((a[0] >> 6) & 0x03030303) << 4;
  const uint32_t mn_hi = ((a[2] >> 4) & 0x0F0F0F0F) | ((a[1] >> 6) & 0x03030303) << 4;
  return {_mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), 0, 0),
          _mm_setr_epi32(static_cast<int>(mn_lo), static_cast<int>(mn_hi), 0, 0), HalfToFloat(d),
          HalfToFloat(dmin)};
}

// The unsigned codes of chunk k from the bit planes of quant.h: the 2-bit
// fields of q2_K / q3_K (and q6_K's top bits), the nibbles of q4_K / q5_K,
// and bit k of a 1-bit plane (q3_K's hmask, q5_K's qh) moved to bit kTo.
template <int k>
__m256i TwoBitCodes(const uint8_t (&qs)[64]) {
  return Mask(Shift<-2 * (k % 4)>(Load32(qs + 32 * (k / 4))), 3);
}

template <int k>
__m256i NibbleCodes(const uint8_t (&qs)[128]) {
  return Mask(Shift<-4 * (k % 2)>(Load32(qs + 32 * (k / 2))), 0x0F);
}

template <int k, int kTo>
__m256i PlaneBit(const uint8_t (&plane)[32]) {
  return Mask(Shift<kTo - k>(Load32(plane)), 1 << kTo);
}

// Per type: the block, sub-block size, code offset, whether it has mins,
// the largest unsigned code, its scales, and Codes<k>, the unsigned codes
// of elements [32k, 32k + 32).
struct KindQ2_K {
  using Block = BlockQ2_K;
  static constexpr int kSubSize = 16;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
  static constexpr int kMaxCode = 3;
  static Scales ScalesOf(const Block& b) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    const __m128i nibble = _mm_set1_epi8(0x0F);
    return {_mm_and_si128(v, nibble), _mm_and_si128(_mm_srli_epi16(v, 4), nibble), HalfToFloat(b.d),
            HalfToFloat(b.dmin)};
  }
  template <int k>
  static __m256i Codes(const Block& b) {
    return TwoBitCodes<k>(b.qs);
  }
};

struct KindQ3_K {
  using Block = BlockQ3_K;
  static constexpr int kSubSize = 16;
  static constexpr int kOffset = 4;
  static constexpr bool kHasMin = false;
  static constexpr int kMaxCode = 7;
  // Sub-block s: low nibble from byte s % 8 (s < 8: low, else high half),
  // top two bits from byte 8 + s % 4 at bit 2 (s / 4); stored + 32.
  static Scales ScalesOf(const Block& b) {
    uint32_t a[3];
    std::memcpy(a, b.scales, sizeof(a));
    const uint32_t low = 0x0F0F0F0F, two = 0x03030303;
    const __m128i biased =
        _mm_setr_epi32(static_cast<int>((a[0] & low) | (a[2] & two) << 4),
                       static_cast<int>((a[1] & low) | ((a[2] >> 2) & two) << 4),
                       static_cast<int>(((a[0] >> 4) & low) | ((a[2] >> 4) & two) << 4),
                       static_cast<int>(((a[1] >> 4) & low) | ((a[2] >> 6) & two) << 4));
    return {_mm_sub_epi8(biased, _mm_set1_epi8(32)), _mm_setzero_si128(), HalfToFloat(b.d), 0.0f};
  }
  template <int k>
  static __m256i Codes(const Block& b) {
    return _mm256_or_si256(TwoBitCodes<k>(b.qs), PlaneBit<k, 2>(b.hmask));
  }
};

// q4_K and q5_K share their scales: 32-element sub-blocks, 6-bit scales
// and mins.
template <typename BlockT>
struct SixBitScaled {
  using Block = BlockT;
  static constexpr int kSubSize = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
  static Scales ScalesOf(const Block& b) { return Scales6(b.scales, b.d, b.dmin); }
};

struct KindQ4_K : SixBitScaled<BlockQ4_K> {
  static constexpr int kMaxCode = 15;
  template <int k>
  static __m256i Codes(const Block& b) {
    return NibbleCodes<k>(b.qs);
  }
};

struct KindQ5_K : SixBitScaled<BlockQ5_K> {
  static constexpr int kMaxCode = 31;
  template <int k>
  static __m256i Codes(const Block& b) {
    return _mm256_or_si256(NibbleCodes<k>(b.qs), PlaneBit<k, 4>(b.qh));
  }
};

struct KindQ6_K {
  using Block = BlockQ6_K;
  static constexpr int kSubSize = 16;
  static constexpr int kOffset = 32;
  static constexpr bool kHasMin = false;
  static constexpr int kMaxCode = 63;
  static Scales ScalesOf(const Block& b) {
    return {_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)), _mm_setzero_si128(),
            HalfToFloat(b.d), 0.0f};
  }
  // Chunk k = 4h + j: nibble j / 2 of ql[64 h + 32 (j % 2) ...], and the
  // top bits, field j of the 2-bit plane qh[32 h ...], shifted straight to
  // bits 4, 5 (one shift and a mask).
  template <int k>
  static __m256i Codes(const Block& b) {
    constexpr int h = k / 4, j = k % 4;
    const __m256i low = Mask(Shift<-4 * (j / 2)>(Load32(b.ql + 64 * h + 32 * (j % 2))), 0x0F);
    return _mm256_or_si256(low, Mask(Shift<4 - 2 * j>(Load32(b.qh + 32 * h)), 0x30));
  }
};

}  // namespace
}  // namespace h2o::kernels::avx2
