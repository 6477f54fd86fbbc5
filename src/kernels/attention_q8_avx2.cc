// AVX2 weighted sums over q8_0 V rows: the KV type whose speed matters
// most (half the bytes of f16 at nearly its accuracy). The widened codes
// are used as they are, and each block's scale is folded into the row's
// probability, so it is applied once per block rather than once per value.
// Each (row, head) result is computed alone, in the same order whatever the
// other heads of the call. (q8_0 K rows are scored by the integer GEMM
// tiles: kv_rows_block.h, ScoreRowsByQuantizedQuery.) Compiled with
// AVX2+FMA+F16C flags only (see simd_avx2.cc for the rules such files
// follow).
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2_common.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

// A block's 32 codes as floats, 8 per register.
struct Widened {
  __m256 v[4];
};

Widened Widen(const BlockQ8_0& b) {
  Widened w;
  Int8x32ToFloats(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), w.v);
  return w;
}

}  // namespace

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
        PrefetchAhead(blk, n_blocks * static_cast<int64_t>(sizeof(BlockQ8_0)), kKvRowPrefetchBytes);
        for (int k = 0; k < n_blocks; ++k) {
          const Widened w = Widen(blk[k]);
          const __m256 coef = _mm256_set1_ps(p[r] * HalfToFloat(blk[k].d));
          for (int j = 0; j < 4; ++j)
            acc[4 * k + j] = _mm256_fmadd_ps(coef, w.v[j], acc[4 * k + j]);
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
    PrefetchAhead(row, nb * static_cast<int64_t>(sizeof(BlockQ8_0)), kKvRowPrefetchBytes);
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
