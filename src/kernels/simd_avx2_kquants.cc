// AVX2 kernels of the K-quants (q2_K ... q6_K) and their activation
// quantizer. Compiled and linked under the rules of simd_avx2.cc.
//
// Every type is read the same way: a super-block is eight chunks of 32
// elements, each one register of unsigned codes u (code = u - kOffset),
// plus int8 scales (and mins) per sub-block of 16 or 32 elements. The
// integer dot of a chunk is maddubs(u, x) (pair sums <= 2 * 63 * 127 <
// 2^15), madd with the chunk's scales (int16 per half-chunk), summed over
// the chunks in int32; offsets and mins come from the activation's sums per
// 16 in one madd each. Bounds: the sum over unsigned codes is at most
// 256 * 63 * 127 * 128 < 2^28 in magnitude (q6_K) and the offset term
// 32 * 128 * 2032 * 16 < 2^27, so the int32 lanes are exact; the
// super-block is then scaled once in float.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/avx2_common.h"
#include "kernels/dispatch.h"
#include "kernels/prefetch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/simd.h"

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
// its scales, and Codes<k>, the unsigned codes of elements [32k, 32k + 32).
struct KindQ2_K {
  using Block = BlockQ2_K;
  static constexpr int kSubSize = 16;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
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
  template <int k>
  static __m256i Codes(const Block& b) {
    return NibbleCodes<k>(b.qs);
  }
};

struct KindQ5_K : SixBitScaled<BlockQ5_K> {
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

// A super-block's scales widened to int16 once, each 128-bit half holding
// eight of them ([s0..s7 | s0..s7] and [s8..s15 | s8..s15]), so that a
// chunk's multipliers are one in-lane byte shuffle.
struct WideScales {
  __m256i lo;
  __m256i hi;
};

WideScales Widen(__m128i scales) {
  return {_mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(scales)),
          _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_unpackhi_epi64(scales, scales)))};
}

// int16 multipliers of chunk k's 16 maddubs pairs: the scale of elements
// [32k, 32k + 16) in the low half, of [32k + 16, 32k + 32) in the high half.
template <int kSubSize, int k>
__m256i ChunkScales(const WideScales& w) {
  constexpr int a = kSubSize == 16 ? 2 * k : k;  // sub-blocks of the two halves
  constexpr int b = kSubSize == 16 ? 2 * k + 1 : k;
  constexpr char a0 = 2 * (a % 8), a1 = 2 * (a % 8) + 1, b0 = 2 * (b % 8), b1 = 2 * (b % 8) + 1;
  static_assert(a / 8 == b / 8);
  const __m256i pick =
      _mm256_setr_epi8(a0, a1, a0, a1, a0, a1, a0, a1, a0, a1, a0, a1, a0, a1, a0, a1, b0, b1, b0,
                       b1, b0, b1, b0, b1, b0, b1, b0, b1, b0, b1, b0, b1);
  return _mm256_shuffle_epi8(a < 8 ? w.lo : w.hi, pick);
}

// Per-sub-block int8 values spread to the 16 groups of 16 elements of the
// activation's bsums, as int16.
template <int kSubSize>
__m256i PerSixteen(__m128i v) {
  if constexpr (kSubSize == 16) return _mm256_cvtepi8_epi16(v);
  return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, v));
}

template <typename Kind, int... k>
__m256i ChunkDots(const typename Kind::Block& b, const BlockQ8KAct& x, const WideScales& scales,
                  std::integer_sequence<int, k...>) {
  __m256i sum = _mm256_setzero_si256();
  ((sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(Kind::template Codes<k>(b),
                                                                       Load32(x.qs + 32 * k)),
                                                  ChunkScales<Kind::kSubSize, k>(scales)))),
   ...);
  return sum;
}

// A super-block takes about as long as the 32-element dots take for a
// kilobyte of their blocks, but is only 84-210 bytes, so hinting a kilobyte
// ahead leaves too little time for the line to arrive: two kilobytes
// measured 5-10% more decode throughput (of the memory-bound roofline) for
// q4_K_M and q6_K files on 2 threads (Sapphire Rapids VM); four were no
// better.
constexpr int64_t kSuperBlockPrefetchBytes = 2048;

template <typename Kind>
float DotQ8K(const void* row, const BlockQ8KAct* x, int64_t n) {
  using Block = typename Kind::Block;
  const auto* blocks = static_cast<const Block*>(row);
  __m256 acc = _mm256_setzero_ps();
  __m256 acc_min = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / 256; ++b) {
    PrefetchAhead(blocks + b, sizeof(Block), kSuperBlockPrefetchBytes);
    const Scales s = Kind::ScalesOf(blocks[b]);
    __m256i isum =
        ChunkDots<Kind>(blocks[b], x[b], Widen(s.scales), std::make_integer_sequence<int, 8>());
    const __m256i bsums = Load32(x[b].bsums);
    if constexpr (Kind::kOffset != 0) {
      static_assert(Kind::kOffset == 4 || Kind::kOffset == 32);
      const __m256i offsets =
          _mm256_slli_epi16(PerSixteen<Kind::kSubSize>(s.scales), Kind::kOffset == 4 ? 2 : 5);
      isum = _mm256_sub_epi32(isum, _mm256_madd_epi16(offsets, bsums));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(s.d * x[b].d), _mm256_cvtepi32_ps(isum), acc);
    if constexpr (Kind::kHasMin) {
      const __m256i msum = _mm256_madd_epi16(PerSixteen<Kind::kSubSize>(s.mins), bsums);
      acc_min = _mm256_fmadd_ps(_mm256_set1_ps(s.dmin * x[b].d), _mm256_cvtepi32_ps(msum), acc_min);
    }
  }
  return HorizontalSum(_mm256_sub_ps(acc, acc_min));
}

// Chunk k's 32 values, step * code - offset per sub-block in the
// reference's float order.
template <typename Kind, int k>
void DequantizeChunk(const typename Kind::Block& b, const Scales& s, const int8_t (&scales)[16],
                     const int8_t (&mins)[16], float* y) {
  __m256 c[4];
  Int8x32ToFloats(_mm256_sub_epi8(Kind::template Codes<k>(b), _mm256_set1_epi8(Kind::kOffset)), c);
  constexpr int first = Kind::kSubSize == 16 ? 2 * k : k;
  constexpr int second = Kind::kSubSize == 16 ? 2 * k + 1 : k;
  StoreAffine16(c, 0, s.d * static_cast<float>(scales[first]),
                s.dmin * static_cast<float>(mins[first]), y + 32 * k);
  StoreAffine16(c, 2, s.d * static_cast<float>(scales[second]),
                s.dmin * static_cast<float>(mins[second]), y + 32 * k + 16);
}

template <typename Kind, int... k>
void DequantizeBlock(const typename Kind::Block& b, float* y, std::integer_sequence<int, k...>) {
  const Scales s = Kind::ScalesOf(b);
  int8_t scales[16], mins[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(scales), s.scales);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(mins), s.mins);
  (DequantizeChunk<Kind, k>(b, s, scales, mins, y), ...);
}

template <typename Kind>
void Dequantize(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const typename Kind::Block*>(src);
  for (int64_t b = 0; b < n / 256; ++b) {
    DequantizeBlock<Kind>(blocks[b], dst + 256 * b, std::make_integer_sequence<int, 8>());
  }
}

template <typename Kind>
TypeKernels KernelsOf(QuantizeRowFn quantize) {
  using Block = typename Kind::Block;
  return {
      quantize,
      Dequantize<Kind>,
      [](const void* row, const float* x, int64_t n) {
        return DotViaDequantize<256, sizeof(Block), 256>(row, x, n, Dequantize<Kind>);
      },
      nullptr,
      DotQ8K<Kind>,
  };
}

}  // namespace

// As the reference (d = amax / 127 over the super-block, codes rounded to
// nearest even, sums per 16), so the blocks are identical.
void QuantizeActivationK(const float* x, BlockQ8KAct* dst, int64_t n) {
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    float amax = 0.0f;
    for (int c = 0; c < 8; ++c) {
      const float m = AbsMax32(x + 32 * c);
      amax = m > amax ? m : amax;
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = d;
    for (int c = 0; c < 8; ++c) {
      const Codes32 q = RoundToCodes(x + 32 * c, id);
      StoreCodes(q, dst[b].qs + 32 * c);
      dst[b].bsums[2 * c] = static_cast<int16_t>(HorizontalSum(_mm256_add_epi32(q.v[0], q.v[1])));
      dst[b].bsums[2 * c + 1] =
          static_cast<int16_t>(HorizontalSum(_mm256_add_epi32(q.v[2], q.v[3])));
    }
  }
}

TypeKernels Q2_KKernels() { return KernelsOf<KindQ2_K>(ref::QuantizeRowQ2_K); }
TypeKernels Q3_KKernels() { return KernelsOf<KindQ3_K>(ref::QuantizeRowQ3_K); }
TypeKernels Q4_KKernels() { return KernelsOf<KindQ4_K>(ref::QuantizeRowQ4_K); }
TypeKernels Q5_KKernels() { return KernelsOf<KindQ5_K>(ref::QuantizeRowQ5_K); }
TypeKernels Q6_KKernels() { return KernelsOf<KindQ6_K>(ref::QuantizeRowQ6_K); }

}  // namespace h2o::kernels::avx2
