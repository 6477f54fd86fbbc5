// AVX2 attention row kernels: scores of a group of query heads against a
// run of K rows, and the probability-weighted sums of a run of V rows, for
// f32 and f16 cache rows. Whole runs per call let the loops keep several
// rows or heads in flight (one query: four K rows per step share a load of
// q, and the V sum keeps 64 output columns in registers across all rows;
// several heads: each widened 8 values of a row feed every head) instead
// of paying a call, a row conversion into a scratch buffer and a reload of
// the output per slot. Compiled with AVX2+FMA+F16C flags only (see simd_avx2.cc for the
// rules such files follow).
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2_common.h"
#include "kernels/prefetch.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

constexpr int64_t kWidth = 8;

struct F32Rows {
  static constexpr int64_t kBytes = sizeof(float);
  const float* p;
  __m256 Load(int64_t i) const { return _mm256_loadu_ps(p + i); }
  float At(int64_t i) const { return p[i]; }
  // Hints elements [i, i + n), kKvRowPrefetchBytes ahead.
  void PrefetchAhead(int64_t i, int64_t n) const {
    kernels::PrefetchAhead(p + i, n * static_cast<int64_t>(sizeof(float)), kKvRowPrefetchBytes);
  }
};

struct F16Rows {
  static constexpr int64_t kBytes = sizeof(uint16_t);
  const uint16_t* p;
  __m256 Load(int64_t i) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
  }
  float At(int64_t i) const { return _cvtsh_ss(p[i]); }
  void PrefetchAhead(int64_t i, int64_t n) const {
    kernels::PrefetchAhead(p + i, n * static_cast<int64_t>(sizeof(uint16_t)), kKvRowPrefetchBytes);
  }
};

float Sum1(__m256 v) { return _mm_cvtss_f32(Sum4(v, v, v, v)); }

// Lane j holds the sum of the 8 lanes of a[j], added in Sum4's order (the
// two halves of each hadd tree, then low + high), so each lane is
// bit-identical to Sum1 of its accumulator.
__m256 Sum8(const __m256 a[8]) {
  const __m256 s0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
  const __m256 s1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(s0, s1, 0x20), _mm256_permute2f128_ps(s0, s1, 0x31));
}

// Columns past the last full vector of row `base`.
template <typename Rows>
float TailDot(const float* q, Rows rows, int64_t base, int64_t from, int64_t d) {
  float s = 0.0f;
  for (int64_t i = from; i < d; ++i) s += rows.At(base + i) * q[i];
  return s;
}

// One query: four rows per step share each load of q.
template <typename Rows>
void ScoreRowsOneQuery(const float* q, Rows rows, int64_t n_rows, int64_t d, float scale,
                       float* out) {
  const int64_t d8 = d - d % kWidth;
  const __m128 vscale = _mm_set1_ps(scale);
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) {
    const int64_t b0 = r * d, b1 = b0 + d, b2 = b1 + d, b3 = b2 + d;
    rows.PrefetchAhead(b0, 4 * d);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < d8; i += kWidth) {
      const __m256 qv = _mm256_loadu_ps(q + i);
      a0 = _mm256_fmadd_ps(rows.Load(b0 + i), qv, a0);
      a1 = _mm256_fmadd_ps(rows.Load(b1 + i), qv, a1);
      a2 = _mm256_fmadd_ps(rows.Load(b2 + i), qv, a2);
      a3 = _mm256_fmadd_ps(rows.Load(b3 + i), qv, a3);
    }
    __m128 s = Sum4(a0, a1, a2, a3);
    if (d8 < d) {
      s = _mm_add_ps(s, _mm_setr_ps(TailDot(q, rows, b0, d8, d), TailDot(q, rows, b1, d8, d),
                                    TailDot(q, rows, b2, d8, d), TailDot(q, rows, b3, d8, d)));
    }
    _mm_storeu_ps(out + r, _mm_mul_ps(s, vscale));
  }
  for (; r < n_rows; ++r) {
    const int64_t b = r * d;
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < d8; i += kWidth) a = _mm256_fmadd_ps(rows.Load(b + i), _mm256_loadu_ps(q + i), a);
    out[r] = (Sum1(a) + TailDot(q, rows, b, d8, d)) * scale;
  }
}

// M query heads (2..4): each row is widened once per 8 columns and feeds
// M accumulators.
template <int M, typename Rows>
void ScoreRowsHeads(const float* q, Rows rows, int64_t n_rows, int64_t d, float scale, float* out,
                    int64_t out_stride) {
  const int64_t d8 = d - d % kWidth;
  for (int64_t r = 0; r < n_rows; ++r) {
    const int64_t b = r * d;
    rows.PrefetchAhead(b, d);
    __m256 acc[M];
    for (int h = 0; h < M; ++h) acc[h] = _mm256_setzero_ps();
    for (int64_t i = 0; i < d8; i += kWidth) {
      const __m256 kv = rows.Load(b + i);
      for (int h = 0; h < M; ++h) acc[h] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q + h * d + i), acc[h]);
    }
    for (int h = 0; h < M; ++h) {
      out[h * out_stride + r] = (Sum1(acc[h]) + TailDot(q + h * d, rows, b, d8, d)) * scale;
    }
  }
}

// Four heads, two rows per step: each widened K value feeds four
// accumulators and each load of q two, about half the loads per FMA of
// one row against M heads (whose q rows do not fit in registers and are
// reloaded for every K row). Lane h of Sum4 is the same sum, in the same
// order, as Sum1 of head h's accumulator, so the scores are bit-identical
// to ScoreRowsHeads<4>.
template <typename Rows>
void ScoreRowsFourHeads(const float* q, Rows rows, int64_t n_rows, int64_t d, float scale,
                        float* out, int64_t out_stride) {
  const int64_t d8 = d - d % kWidth;
  const __m128 vscale = _mm_set1_ps(scale);
  int64_t r = 0;
  for (; r + 2 <= n_rows; r += 2) {
    const int64_t b0 = r * d, b1 = b0 + d;
    rows.PrefetchAhead(b0, 2 * d);
    __m256 a0[4], a1[4];  // [head] for rows r and r + 1
    for (int h = 0; h < 4; ++h) a0[h] = a1[h] = _mm256_setzero_ps();
    for (int64_t i = 0; i < d8; i += kWidth) {
      const __m256 k0 = rows.Load(b0 + i), k1 = rows.Load(b1 + i);
      for (int h = 0; h < 4; ++h) {
        const __m256 qv = _mm256_loadu_ps(q + h * d + i);
        a0[h] = _mm256_fmadd_ps(k0, qv, a0[h]);
        a1[h] = _mm256_fmadd_ps(k1, qv, a1[h]);
      }
    }
    __m128 s0 = Sum4(a0[0], a0[1], a0[2], a0[3]);
    __m128 s1 = Sum4(a1[0], a1[1], a1[2], a1[3]);
    if (d8 < d) {
      auto tails = [&](int64_t b) {  // the four heads' columns past d8 of row b
        return _mm_setr_ps(TailDot(q, rows, b, d8, d), TailDot(q + d, rows, b, d8, d),
                           TailDot(q + 2 * d, rows, b, d8, d), TailDot(q + 3 * d, rows, b, d8, d));
      };
      s0 = _mm_add_ps(s0, tails(b0));
      s1 = _mm_add_ps(s1, tails(b1));
    }
    alignas(16) float t0[4], t1[4];
    _mm_store_ps(t0, _mm_mul_ps(s0, vscale));
    _mm_store_ps(t1, _mm_mul_ps(s1, vscale));
    for (int h = 0; h < 4; ++h) {
      out[h * out_stride + r] = t0[h];
      out[h * out_stride + r + 1] = t1[h];
    }
  }
  if (r < n_rows) ScoreRowsHeads<4>(q, Rows{rows.p + r * d}, 1, d, scale, out + r, out_stride);
}

// Two heads, four rows per step: the eight sums reduce together (Sum8)
// into each head's four consecutive scores, stored as one vector each,
// where ScoreRowsFourHeads reduces four at a time and scatters them; the
// sums are the same bits.
template <typename Rows>
void ScoreRowsTwoHeads(const float* q, Rows rows, int64_t n_rows, int64_t d, float scale,
                       float* out, int64_t out_stride) {
  const int64_t d8 = d - d % kWidth;
  const float* q1 = q + d;
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t r = 0;
  for (; r + 4 <= n_rows; r += 4) {
    const int64_t b = r * d;
    __m256 acc[8];  // [head][row]
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (int64_t i = 0; i < d8; i += kWidth) {
      const __m256 q0v = _mm256_loadu_ps(q + i), q1v = _mm256_loadu_ps(q1 + i);
      for (int j = 0; j < 4; ++j) {
        const __m256 k = rows.Load(b + j * d + i);
        acc[j] = _mm256_fmadd_ps(k, q0v, acc[j]);
        acc[4 + j] = _mm256_fmadd_ps(k, q1v, acc[4 + j]);
      }
    }
    __m256 s = Sum8(acc);
    if (d8 < d) {
      s = _mm256_add_ps(
          s,
          _mm256_setr_ps(TailDot(q, rows, b, d8, d), TailDot(q, rows, b + d, d8, d),
                         TailDot(q, rows, b + 2 * d, d8, d), TailDot(q, rows, b + 3 * d, d8, d),
                         TailDot(q1, rows, b, d8, d), TailDot(q1, rows, b + d, d8, d),
                         TailDot(q1, rows, b + 2 * d, d8, d), TailDot(q1, rows, b + 3 * d, d8, d)));
    }
    s = _mm256_mul_ps(s, vscale);
    _mm_storeu_ps(out + r, _mm256_castps256_ps128(s));
    _mm_storeu_ps(out + out_stride + r, _mm256_extractf128_ps(s, 1));
  }
  if (r < n_rows) {
    ScoreRowsHeads<2>(q, Rows{rows.p + r * d}, n_rows - r, d, scale, out + r, out_stride);
  }
}

// Up to four heads read each row once: heads in fours, the last one to
// three on their own kernels.
template <typename Rows>
void ScoreRowsFewHeads(const float* q, int64_t n_q, Rows rows, int64_t n_rows, int64_t d,
                       float scale, float* out, int64_t out_stride) {
  for (; n_q >= 4; n_q -= 4, q += 4 * d, out += 4 * out_stride) {
    ScoreRowsFourHeads(q, rows, n_rows, d, scale, out, out_stride);
  }
  switch (n_q) {
    case 1: ScoreRowsOneQuery(q, rows, n_rows, d, scale, out); break;
    case 2: ScoreRowsHeads<2>(q, rows, n_rows, d, scale, out, out_stride); break;
    case 3: ScoreRowsHeads<3>(q, rows, n_rows, d, scale, out, out_stride); break;
    default: break;
  }
}

// More heads (GQA groups of 8, a prefill's block of queries times its
// group) take the rows in tiles that stay in L1 while every pair of heads
// reads them; the next tile is hinted in while this one is scored.
constexpr int64_t kTileBytes = 8192;

template <typename Rows>
void ScoreRows(const float* q, int64_t n_q, Rows rows, int64_t n_rows, int64_t d, float scale,
               float* out, int64_t out_stride) {
  if (n_q <= 4) {
    ScoreRowsFewHeads(q, n_q, rows, n_rows, d, scale, out, out_stride);
    return;
  }
  const int64_t row_bytes = d * Rows::kBytes;
  const int64_t tile = kTileBytes / row_bytes > 4 ? kTileBytes / row_bytes / 4 * 4 : 4;
  for (int64_t first = 0; first < n_rows; first += tile) {
    const int64_t n = n_rows - first < tile ? n_rows - first : tile;
    const Rows t{rows.p + first * d};
    kernels::PrefetchAhead(t.p, n * row_bytes, n * row_bytes);
    int64_t h = 0;
    for (; h + 2 <= n_q; h += 2) {
      ScoreRowsTwoHeads(q + h * d, t, n, d, scale, out + h * out_stride + first, out_stride);
    }
    if (h < n_q) ScoreRowsOneQuery(q + h * d, t, n, d, scale, out + h * out_stride + first);
  }
}

// One head: 64 output columns (8 registers) per pass over the rows.
template <typename Rows>
void WeightedSumRowsOneQuery(const float* p, Rows rows, int64_t n_rows, int64_t d, float* out) {
  int64_t i0 = 0;
  for (; i0 + 8 * kWidth <= d; i0 += 8 * kWidth) {
    __m256 acc[8];
    for (int j = 0; j < 8; ++j) acc[j] = _mm256_loadu_ps(out + i0 + j * kWidth);
    for (int64_t r = 0; r < n_rows; ++r) {
      const __m256 pr = _mm256_set1_ps(p[r]);
      const int64_t b = r * d + i0;
      rows.PrefetchAhead(b, 8 * kWidth);
      for (int j = 0; j < 8; ++j) acc[j] = _mm256_fmadd_ps(pr, rows.Load(b + j * kWidth), acc[j]);
    }
    for (int j = 0; j < 8; ++j) _mm256_storeu_ps(out + i0 + j * kWidth, acc[j]);
  }
  for (; i0 + kWidth <= d; i0 += kWidth) {
    __m256 acc = _mm256_loadu_ps(out + i0);
    for (int64_t r = 0; r < n_rows; ++r) {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(p[r]), rows.Load(r * d + i0), acc);
    }
    _mm256_storeu_ps(out + i0, acc);
  }
  for (; i0 < d; ++i0) {
    float s = out[i0];
    for (int64_t r = 0; r < n_rows; ++r) s += p[r] * rows.At(r * d + i0);
    out[i0] = s;
  }
}

// M heads (2..8), 8 output columns of each per pass (from column i0 on):
// every 8 widened values of a row feed M accumulators.
template <int M, typename Rows>
void WeightedSumRowsHeads(const float* p, int64_t p_stride, Rows rows, int64_t n_rows, int64_t d,
                          float* out, int64_t i0 = 0) {
  for (; i0 + kWidth <= d; i0 += kWidth) {
    __m256 acc[M];
    for (int h = 0; h < M; ++h) acc[h] = _mm256_loadu_ps(out + h * d + i0);
    for (int64_t r = 0; r < n_rows; ++r) {
      const __m256 vv = rows.Load(r * d + i0);
      for (int h = 0; h < M; ++h) acc[h] = _mm256_fmadd_ps(_mm256_set1_ps(p[h * p_stride + r]), vv, acc[h]);
    }
    for (int h = 0; h < M; ++h) _mm256_storeu_ps(out + h * d + i0, acc[h]);
  }
  for (; i0 < d; ++i0) {
    for (int h = 0; h < M; ++h) {
      float s = out[h * d + i0];
      for (int64_t r = 0; r < n_rows; ++r) s += p[h * p_stride + r] * rows.At(r * d + i0);
      out[h * d + i0] = s;
    }
  }
}

// Six heads, 16 output columns of each per pass: two widened vectors of a
// row feed twelve accumulators, 8 loads per 12 FMAs where the 8-head
// kernel takes 9 per 8. Each output adds its rows in the same order, so
// the sums are the same bits.
template <typename Rows>
void WeightedSumRowsSixHeads(const float* p, int64_t p_stride, Rows rows, int64_t n_rows, int64_t d,
                             float* out) {
  constexpr int kHeads = 6;
  int64_t i0 = 0;
  for (; i0 + 2 * kWidth <= d; i0 += 2 * kWidth) {
    __m256 acc[kHeads][2];
    for (int h = 0; h < kHeads; ++h) {
      acc[h][0] = _mm256_loadu_ps(out + h * d + i0);
      acc[h][1] = _mm256_loadu_ps(out + h * d + i0 + kWidth);
    }
    for (int64_t r = 0; r < n_rows; ++r) {
      const __m256 v0 = rows.Load(r * d + i0), v1 = rows.Load(r * d + i0 + kWidth);
      for (int h = 0; h < kHeads; ++h) {
        const __m256 ph = _mm256_set1_ps(p[h * p_stride + r]);
        acc[h][0] = _mm256_fmadd_ps(ph, v0, acc[h][0]);
        acc[h][1] = _mm256_fmadd_ps(ph, v1, acc[h][1]);
      }
    }
    for (int h = 0; h < kHeads; ++h) {
      _mm256_storeu_ps(out + h * d + i0, acc[h][0]);
      _mm256_storeu_ps(out + h * d + i0 + kWidth, acc[h][1]);
    }
  }
  if (i0 < d) WeightedSumRowsHeads<kHeads>(p, p_stride, rows, n_rows, d, out, i0);
}

// Up to eight heads read each row once.
template <typename Rows>
void WeightedSumRowsFewHeads(const float* p, int64_t p_stride, int64_t n_q, Rows rows,
                             int64_t n_rows, int64_t d, float* out) {
  while (n_q > 0) {
    const int64_t m = n_q < 8 ? n_q : 8;
    switch (m) {
      case 1: WeightedSumRowsOneQuery(p, rows, n_rows, d, out); break;
      case 2: WeightedSumRowsHeads<2>(p, p_stride, rows, n_rows, d, out); break;
      case 3: WeightedSumRowsHeads<3>(p, p_stride, rows, n_rows, d, out); break;
      case 4: WeightedSumRowsHeads<4>(p, p_stride, rows, n_rows, d, out); break;
      case 5: WeightedSumRowsHeads<5>(p, p_stride, rows, n_rows, d, out); break;
      case 6: WeightedSumRowsHeads<6>(p, p_stride, rows, n_rows, d, out); break;
      case 7: WeightedSumRowsHeads<7>(p, p_stride, rows, n_rows, d, out); break;
      default: WeightedSumRowsHeads<8>(p, p_stride, rows, n_rows, d, out); break;
    }
    p += m * p_stride;
    out += m * d;
    n_q -= m;
  }
}

// More heads (a prefill block) take the rows in tiles that stay in L1
// while every six heads read them, each output carried in memory from
// tile to tile, its rows still added in order.
template <typename Rows>
void WeightedSumRows(const float* p, int64_t p_stride, int64_t n_q, Rows rows, int64_t n_rows,
                     int64_t d, float* out) {
  if (n_q <= 8) {
    WeightedSumRowsFewHeads(p, p_stride, n_q, rows, n_rows, d, out);
    return;
  }
  const int64_t row_bytes = d * Rows::kBytes;
  const int64_t tile = 2 * kTileBytes / row_bytes > 1 ? 2 * kTileBytes / row_bytes : 1;
  for (int64_t first = 0; first < n_rows; first += tile) {
    const int64_t n = n_rows - first < tile ? n_rows - first : tile;
    const Rows t{rows.p + first * d};
    kernels::PrefetchAhead(t.p, n * row_bytes, n * row_bytes);
    int64_t h = 0;
    // Sixes while more than eight remain; the rest in one group.
    for (; n_q - h > 8; h += 6) {
      WeightedSumRowsSixHeads(p + h * p_stride + first, p_stride, t, n, d, out + h * d);
    }
    if (h < n_q)
      WeightedSumRowsFewHeads(p + h * p_stride + first, p_stride, n_q - h, t, n, d, out + h * d);
  }
}

}  // namespace

void ScoreRowsF32(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride) {
  ScoreRows(q, n_q, F32Rows{static_cast<const float*>(rows)}, n_rows, d, scale, out, out_stride);
}

void ScoreRowsF16(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride) {
  ScoreRows(q, n_q, F16Rows{static_cast<const uint16_t*>(rows)}, n_rows, d, scale, out, out_stride);
}

void WeightedSumRowsF32(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out) {
  WeightedSumRows(p, p_stride, n_q, F32Rows{static_cast<const float*>(rows)}, n_rows, d, out);
}

void WeightedSumRowsF16(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out) {
  WeightedSumRows(p, p_stride, n_q, F16Rows{static_cast<const uint16_t*>(rows)}, n_rows, d, out);
}

}  // namespace h2o::kernels::avx2
