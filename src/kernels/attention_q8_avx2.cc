// AVX2 attention row kernels for q8_0 K/V rows: the KV type whose speed
// matters most (half the bytes of f16 at nearly its accuracy). The widened
// codes are used as they are, and each block's scale is applied once per
// block rather than once per value: scores sum code * q over a block, then
// add scale * that sum; weighted sums fold the scale into the row's
// probability. Each (row, head) result is computed alone, in the same
// order whatever the other heads of the call. Compiled with AVX2+FMA+F16C
// flags only (see simd_avx2.cc for the rules such files follow).
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2_common.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

__m256 BlockScale(const BlockQ8_0& b) { return _mm256_set1_ps(HalfToFloat(b.d)); }

// A block's 32 codes as floats, 8 per register.
struct Widened {
  __m256 v[4];
};

Widened Widen(const BlockQ8_0& b) {
  Widened w;
  Int8x32ToFloats(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), w.v);
  return w;
}

// sum_i code[i] * q[i] over one 32-value block, in 8 lanes.
__m256 BlockCodesDot(const Widened& w, const float* q) {
  __m256 a = _mm256_mul_ps(w.v[0], _mm256_loadu_ps(q));
  a = _mm256_fmadd_ps(w.v[1], _mm256_loadu_ps(q + 8), a);
  a = _mm256_fmadd_ps(w.v[2], _mm256_loadu_ps(q + 16), a);
  return _mm256_fmadd_ps(w.v[3], _mm256_loadu_ps(q + 24), a);
}

// One head against one row: the blocks' scaled sums in block order.
__m256 RowDot(const BlockQ8_0* row, int64_t n_blocks, const float* q) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    acc = _mm256_fmadd_ps(BlockScale(row[b]), BlockCodesDot(Widen(row[b]), q + 32 * b), acc);
  }
  return acc;
}

// Up to 8 heads (n_heads, a GQA group or part of a prefill block) against
// one row, each block widened once for all of them; each head's
// accumulator takes exactly RowDot's operations.
constexpr int kMaxGroup = 8;

void RowDotHeads(const BlockQ8_0* row, int64_t n_blocks, const float* q, int64_t d, int n_heads,
                 __m256 acc[kMaxGroup]) {
  for (int h = 0; h < n_heads; ++h) acc[h] = _mm256_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const Widened w = Widen(row[b]);
    const __m256 scale = BlockScale(row[b]);
    for (int h = 0; h < n_heads; ++h) {
      acc[h] = _mm256_fmadd_ps(scale, BlockCodesDot(w, q + h * d + 32 * b), acc[h]);
    }
  }
}

}  // namespace

void ScoreRowsQ8_0(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                   float scale, float* out, int64_t out_stride) {
  const auto* blocks = static_cast<const BlockQ8_0*>(rows);
  const int64_t nb = d / 32;
  const __m128 vscale = _mm_set1_ps(scale);
  if (n_q == 1) {
    int64_t r = 0;
    // Four rows per step: one horizontal reduction for four scores.
    for (; r + 4 <= n_rows; r += 4) {
      const BlockQ8_0* row = blocks + r * nb;
      PrefetchAhead(row, 4 * nb * static_cast<int64_t>(sizeof(BlockQ8_0)));
      const __m128 s = Sum4(RowDot(row, nb, q), RowDot(row + nb, nb, q),
                            RowDot(row + 2 * nb, nb, q), RowDot(row + 3 * nb, nb, q));
      _mm_storeu_ps(out + r, _mm_mul_ps(s, vscale));
    }
    for (; r < n_rows; ++r) {
      const __m256 a = RowDot(blocks + r * nb, nb, q);
      out[r] = _mm_cvtss_f32(_mm_mul_ps(Sum4(a, a, a, a), vscale));
    }
    return;
  }
  // Several heads: each row widened once per group of up to 8 of them.
  for (int64_t r = 0; r < n_rows; ++r) {
    const BlockQ8_0* row = blocks + r * nb;
    PrefetchAhead(row, nb * static_cast<int64_t>(sizeof(BlockQ8_0)));
    for (int64_t h0 = 0; h0 < n_q; h0 += kMaxGroup) {
      const int n_heads = static_cast<int>(n_q - h0 < kMaxGroup ? n_q - h0 : kMaxGroup);
      __m256 acc[kMaxGroup];
      RowDotHeads(row, nb, q + h0 * d, d, n_heads, acc);
      for (int h = 0; h < n_heads; h += 4) {
        alignas(16) float sums[4];
        _mm_store_ps(sums, _mm_mul_ps(Sum4(acc[h], h + 1 < n_heads ? acc[h + 1] : acc[h],
                                           h + 2 < n_heads ? acc[h + 2] : acc[h],
                                           h + 3 < n_heads ? acc[h + 3] : acc[h]),
                                      vscale));
        for (int j = 0; j < 4 && h + j < n_heads; ++j) out[(h0 + h + j) * out_stride + r] = sums[j];
      }
    }
  }
}

void WeightedSumRowsQ8_0(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                         int64_t n_rows, int64_t d, float* out) {
  const auto* blocks = static_cast<const BlockQ8_0*>(rows);
  const int64_t nb = d / 32;
  if (n_q == 1) {
    // Two blocks (64 output columns, 8 registers) per pass over the rows.
    for (int64_t b0 = 0; b0 < nb; b0 += 2) {
      const int n_blocks = nb - b0 >= 2 ? 2 : 1;
      __m256 acc[8];
      for (int j = 0; j < 4 * n_blocks; ++j) acc[j] = _mm256_loadu_ps(out + 32 * b0 + 8 * j);
      for (int64_t r = 0; r < n_rows; ++r) {
        const BlockQ8_0* blk = blocks + r * nb + b0;
        PrefetchAhead(blk, n_blocks * static_cast<int64_t>(sizeof(BlockQ8_0)));
        for (int k = 0; k < n_blocks; ++k) {
          const Widened w = Widen(blk[k]);
          const __m256 coef = _mm256_set1_ps(p[r] * HalfToFloat(blk[k].d));
          for (int j = 0; j < 4; ++j) acc[4 * k + j] = _mm256_fmadd_ps(coef, w.v[j], acc[4 * k + j]);
        }
      }
      for (int j = 0; j < 4 * n_blocks; ++j) _mm256_storeu_ps(out + 32 * b0 + 8 * j, acc[j]);
    }
    return;
  }
  // Several heads: each block of a row widened once for all of them; every
  // output element takes the same fused multiply-adds, in row order, as
  // above.
  for (int64_t r = 0; r < n_rows; ++r) {
    const BlockQ8_0* row = blocks + r * nb;
    PrefetchAhead(row, nb * static_cast<int64_t>(sizeof(BlockQ8_0)));
    for (int64_t b = 0; b < nb; ++b) {
      const Widened w = Widen(row[b]);
      const float block_scale = HalfToFloat(row[b].d);
      for (int64_t h = 0; h < n_q; ++h) {
        const __m256 coef = _mm256_set1_ps(p[h * p_stride + r] * block_scale);
        float* o = out + h * d + 32 * b;
        for (int j = 0; j < 4; ++j) {
          _mm256_storeu_ps(o + 8 * j, _mm256_fmadd_ps(coef, w.v[j], _mm256_loadu_ps(o + 8 * j)));
        }
      }
    }
  }
}

}  // namespace h2o::kernels::avx2
