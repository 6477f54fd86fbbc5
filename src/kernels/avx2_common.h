// Helpers shared by the AVX2-compiled kernel files (simd_avx2.cc and the
// quantized-type, norm and activation files beside it). Internal linkage on purpose: those files
// may not odr-use inline functions from headers (see simd_avx2.cc), and only
// they may include this (it needs -mavx2 -mfma -mf16c).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/prefetch.h"
#include "kernels/quant.h"

namespace h2o::kernels::avx2 {
namespace {

[[maybe_unused]] float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Lane j holds the sum of the 8 lanes of a_j, by one hadd tree; lane j is
// the same bits whatever the other three arguments, so Sum4(a, a, a, a)
// lane 0 is a's sum as four-at-a-time reductions give it.
[[maybe_unused]] __m128 Sum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 s = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

[[maybe_unused]] float HorizontalMax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

[[maybe_unused]] double HorizontalSum(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  return _mm_cvtsd_f64(s);
}

[[maybe_unused]] int32_t HorizontalSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}

[[maybe_unused]] float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

// Lanes [0, n) set, n in [0, 8].
[[maybe_unused]] __m256i TailMask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The first n floats of p, zeros after; reads nothing past p + n.
[[maybe_unused]] __m256 LoadTail(const float* p, int64_t n) {
  return _mm256_maskload_ps(p, TailMask(n));
}
[[maybe_unused]] void StoreTail(float* p, __m256 v, int64_t n) {
  _mm256_maskstore_ps(p, TailMask(n), v);
}

// exp(x) lane by lane: x = n ln2 + r with |r| <= ln2/2, e^r by a degree-7
// polynomial (Cephes expf coefficients), 2^n applied as two power-of-two
// factors so that results near overflow (n = 128) and in the subnormal
// range come out right. x is clamped to [-104, 89] first: below, the
// result rounds to 0 anyway (-inf gives 0); above, it overflows to inf.
// NaN stays NaN (max/min return their second operand on NaN).
[[maybe_unused]] __m256 Exp(__m256 x) {
  x = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);
  x = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln2 = 0.693359375 - 2.12194440e-4; n * 0.693359375 is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(r, r), p, r);
  p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
  // n in [-150, 128] -> halves in [-75, 64], both normal powers of two.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 scale1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 scale2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, scale1), scale2);
}

// max |x[i]| over 32 floats.
[[maybe_unused]] float AbsMax32(const float* x) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x), abs_mask),
                                               _mm256_and_ps(_mm256_loadu_ps(x + 8), abs_mask)),
                                 _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + 16), abs_mask),
                                               _mm256_and_ps(_mm256_loadu_ps(x + 24), abs_mask)));
  return HorizontalMax(m);
}

// The activation codes of 32 floats: round-to-nearest-even(x * id) as four
// groups of 8 int32, in element order.
struct Codes32 {
  __m256i v[4];
};

[[maybe_unused]] Codes32 RoundToCodes(const float* x, float id) {
  const __m256 vid = _mm256_set1_ps(id);
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  Codes32 c;
  for (int k = 0; k < 4; ++k) {
    c.v[k] =
        _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), vid), kRound));
  }
  return c;
}

// Stores the 32 codes (|code| <= 127) as int8 in element order.
[[maybe_unused]] void StoreCodes(const Codes32& c, int8_t* dst) {
  // The packs work within 128-bit lanes, leaving the four-element groups
  // in the order 0 2 4 6 1 3 5 7; one dword permute restores it.
  const __m256i p16a = _mm256_packs_epi32(c.v[0], c.v[1]);
  const __m256i p16b = _mm256_packs_epi32(c.v[2], c.v[3]);
  const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
  const __m256i ordered =
      _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), ordered);
}

// The 8 int32 lanes of four blocks reduced to one sum per block, in
// block order: three hadds and one 128-bit add.
[[maybe_unused]] __m128i BlockSums4(__m256i s0, __m256i s1, __m256i s2, __m256i s3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// acc (lane 0) + t[0] + t[1] + t[2] + t[3], added one at a time in that
// order.
[[maybe_unused]] __m128 AddLanesInOrder(__m128 acc, __m128 t) {
  acc = _mm_add_ss(acc, t);
  acc = _mm_add_ss(acc, _mm_movehdup_ps(t));
  acc = _mm_add_ss(acc, _mm_movehl_ps(t, t));
  return _mm_add_ss(acc, _mm_shuffle_ps(t, t, 0xFF));
}

// The reference's integer dot (ref_quant.cc, ref_quant_ext.cc) bit for bit:
// per 32-element block the exact int32 sum isum, then sum += (d_w * d_x) *
// isum, or for the types whose blocks carry a min m (x = d q + m) sum +=
// (d_w * d_x) * isum - (-m_w * d_x) * xsum (xsum: the activation block's
// code sum), blocks in order, no FMA; MatMul's tiles (gemm_tile_q8.h) do
// the same. block_dot(block, x) gives the block's int32 sum spread over 8
// lanes. Four blocks per step: their lane sums reduced to four int32
// (exact) and their float terms formed together; only the four additions
// to the running sum are serial.
template <typename Block, bool kHasMin, typename BlockDot>
float DotBlocksQ8(const void* row, const BlockQ8Act* x, int64_t n, BlockDot block_dot) {
  const auto* blocks = static_cast<const Block*>(row);
  const int64_t n_blocks = n / 32;
  __m128 acc = _mm_setzero_ps();
  int64_t b = 0;
  for (; b + 4 <= n_blocks; b += 4) {
    PrefetchAhead(blocks + b, 4 * sizeof(Block));
    const __m128i sums =
        BlockSums4(block_dot(blocks[b], x[b]), block_dot(blocks[b + 1], x[b + 1]),
                   block_dot(blocks[b + 2], x[b + 2]), block_dot(blocks[b + 3], x[b + 3]));
    const __m128 d_w = _mm_cvtph_ps(_mm_setr_epi16(
        static_cast<int16_t>(blocks[b].d), static_cast<int16_t>(blocks[b + 1].d),
        static_cast<int16_t>(blocks[b + 2].d), static_cast<int16_t>(blocks[b + 3].d), 0, 0, 0, 0));
    const __m128 d_x = _mm_setr_ps(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d);
    __m128 term = _mm_mul_ps(_mm_mul_ps(d_w, d_x), _mm_cvtepi32_ps(sums));
    if constexpr (kHasMin) {
      const __m128 m_w = _mm_cvtph_ps(
          _mm_setr_epi16(static_cast<int16_t>(blocks[b].m), static_cast<int16_t>(blocks[b + 1].m),
                         static_cast<int16_t>(blocks[b + 2].m),
                         static_cast<int16_t>(blocks[b + 3].m), 0, 0, 0, 0));
      const __m128 dmin = _mm_xor_ps(m_w, _mm_set1_ps(-0.0f));
      const __m128i x_sums = _mm_setr_epi32(x[b].sum, x[b + 1].sum, x[b + 2].sum, x[b + 3].sum);
      term = _mm_sub_ps(term, _mm_mul_ps(_mm_mul_ps(dmin, d_x), _mm_cvtepi32_ps(x_sums)));
    }
    acc = AddLanesInOrder(acc, term);
  }
  float sum = _mm_cvtss_f32(acc);
  for (; b < n_blocks; ++b) {
    const float isum = static_cast<float>(HorizontalSum(block_dot(blocks[b], x[b])));
    float term = (HalfToFloat(blocks[b].d) * x[b].d) * isum;
    if constexpr (kHasMin) {
      term = term - (-HalfToFloat(blocks[b].m) * x[b].d) * static_cast<float>(x[b].sum);
    }
    sum = sum + term;
  }
  return sum;
}

// sum_i w[i] x[i] for a row of blocks of kBlockElems elements, each
// dequantized into a buffer by `dequantize` (the backend's own, so the
// values are the exact ones) kChunk elements at a time and dotted with x in
// four accumulators. n is a multiple of kBlockElems; kChunk of kBlockElems.
template <int64_t kBlockElems, size_t kBlockBytes, int64_t kChunk, typename Dequantize>
float DotViaDequantize(const void* row, const float* x, int64_t n, Dequantize dequantize) {
  static_assert(kChunk % kBlockElems == 0 && kBlockElems % 32 == 0);
  alignas(32) float w[kChunk];
  const auto* bytes = static_cast<const uint8_t*>(row);
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps();
  __m256 acc3 = _mm256_setzero_ps();
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = n - i < kChunk ? n - i : kChunk;
    dequantize(bytes + i / kBlockElems * kBlockBytes, w, m);
    for (int64_t j = 0; j < m; j += 32) {
      acc0 = _mm256_fmadd_ps(_mm256_load_ps(w + j), _mm256_loadu_ps(x + i + j), acc0);
      acc1 = _mm256_fmadd_ps(_mm256_load_ps(w + j + 8), _mm256_loadu_ps(x + i + j + 8), acc1);
      acc2 = _mm256_fmadd_ps(_mm256_load_ps(w + j + 16), _mm256_loadu_ps(x + i + j + 16), acc2);
      acc3 = _mm256_fmadd_ps(_mm256_load_ps(w + j + 24), _mm256_loadu_ps(x + i + j + 24), acc3);
    }
  }
  return HorizontalSum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
}

// 32 int8 values -> 32 floats in four groups of 8, element order.
[[maybe_unused]] void Int8x32ToFloats(__m256i q, __m256 (&out)[4]) {
  const __m128i lo = _mm256_castsi256_si128(q);
  const __m128i hi = _mm256_extracti128_si256(q, 1);
  out[0] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo));
  out[1] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_unpackhi_epi64(lo, lo)));
  out[2] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi));
  out[3] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_unpackhi_epi64(hi, hi)));
}

// Stores step * c - offset for 16 elements (two groups of 8), as the
// reference computes them (a multiply, then a subtraction: no FMA).
[[maybe_unused]] void StoreAffine16(const __m256 (&c)[4], int first, float step, float offset,
                                    float* y) {
  const __m256 vs = _mm256_set1_ps(step);
  const __m256 vo = _mm256_set1_ps(offset);
  _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(vs, c[first]), vo));
  _mm256_storeu_ps(y + 8, _mm256_sub_ps(_mm256_mul_ps(vs, c[first + 1]), vo));
}

}  // namespace
}  // namespace h2o::kernels::avx2
