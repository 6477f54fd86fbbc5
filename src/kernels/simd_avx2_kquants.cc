// AVX2 kernels of the K-quants (q2_K ... q6_K) and their activation
// quantizer. Compiled and linked under the rules of simd_avx2.cc; the codes
// and scales are read as kquant_codes_avx2.h says.
//
// The integer dot of a chunk is maddubs(u, x) (pair sums <= 2 * 63 * 127 <
// 2^15), madd with the chunk's scales (int16 per half-chunk), summed over
// the chunks in int32; offsets and mins come from the activation's sums per
// 16 in one madd each. Bounds: the sum over unsigned codes is at most
// 256 * 63 * 127 * 128 < 2^28 in magnitude (q6_K) and the offset term
// 32 * 128 * 2032 * 16 < 2^27, so the int32 lanes are exact. A super-block's
// sums are then added up exactly and scaled in the reference's float
// expression (ref_quant_ext.cc), so that these dots, the tiles and the
// reference agree bit for bit.
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/avx2_common.h"
#include "kernels/dispatch.h"
#include "kernels/kquant_codes_avx2.h"
#include "kernels/prefetch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

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

// Inlined by force: as calls, this and SuperBlockSums pass vectors through
// memory, and decode measured 20% slower (q4_K_M, 1B shape, Zen 3).
template <typename Kind, int... k>
[[gnu::always_inline]] inline __m256i ChunkDots(const typename Kind::Block& b, const BlockQ8KAct& x,
                                                const WideScales& scales,
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

// A super-block's integer sums, still spread over the lanes: the scaled
// code dot (offsets taken off) and the min term (zero without mins).
struct LaneSums {
  __m256i isum;
  __m256i msum;
};

template <typename Kind>
[[gnu::always_inline]] inline LaneSums SuperBlockSums(const typename Kind::Block& block,
                                                      const BlockQ8KAct& x, float* d, float* dmin) {
  const Scales s = Kind::ScalesOf(block);
  *d = s.d;
  *dmin = s.dmin;
  __m256i isum = ChunkDots<Kind>(block, x, Widen(s.scales), std::make_integer_sequence<int, 8>());
  const __m256i bsums = Load32(x.bsums);
  if constexpr (Kind::kOffset != 0) {
    static_assert(Kind::kOffset == 4 || Kind::kOffset == 32);
    const __m256i offsets =
        _mm256_slli_epi16(PerSixteen<Kind::kSubSize>(s.scales), Kind::kOffset == 4 ? 2 : 5);
    isum = _mm256_sub_epi32(isum, _mm256_madd_epi16(offsets, bsums));
  }
  __m256i msum = _mm256_setzero_si256();
  if constexpr (Kind::kHasMin) msum = _mm256_madd_epi16(PerSixteen<Kind::kSubSize>(s.mins), bsums);
  return {isum, msum};
}

// Super-blocks two at a time, so that one hadd tree reduces the four sums
// to [isum0, msum0, isum1, msum1]; each then goes through the reference's
// float expression, in block order. The reductions cost decode 7-27%
// (q4_K_M..q5_K, 1B shape, Zen 3) against the lane-wise float sums this
// replaced, which the rows-in-lanes tiles could not match bit for bit; a
// reduction per super-block measured no better than this pairing.
template <typename Kind>
float DotQ8K(const void* row, const BlockQ8KAct* x, int64_t n) {
  using Block = typename Kind::Block;
  const auto* blocks = static_cast<const Block*>(row);
  const int64_t nb = n / 256;
  float sum = 0.0f;
  for (int64_t b = 0; b < nb; b += 2) {
    PrefetchAhead(blocks + b, sizeof(Block), kSuperBlockPrefetchBytes);
    const bool pair = b + 1 < nb;
    float d[2] = {}, dmin[2] = {};
    const LaneSums s0 = SuperBlockSums<Kind>(blocks[b], x[b], &d[0], &dmin[0]);
    LaneSums s1 = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    if (pair) s1 = SuperBlockSums<Kind>(blocks[b + 1], x[b + 1], &d[1], &dmin[1]);
    const __m256i h =
        _mm256_hadd_epi32(_mm256_hadd_epi32(s0.isum, s0.msum), _mm256_hadd_epi32(s1.isum, s1.msum));
    int32_t sums[4];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sums),
                     _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
    for (int k = 0; k < (pair ? 2 : 1); ++k) {
      const float dx = x[b + k].d;
      sum += (d[k] * dx) * static_cast<float>(sums[2 * k]) -
             (dmin[k] * dx) * static_cast<float>(sums[2 * k + 1]);
    }
  }
  return sum;
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
