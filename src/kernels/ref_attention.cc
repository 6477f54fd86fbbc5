// Scalar reference attention row kernels: one reference dot or multiply-add
// per head, row and column, in row order, exactly what the per-slot
// attention loop did before the SIMD backends got whole-run kernels.
#include "kernels/fp16.h"
#include "kernels/ref.h"

namespace h2o::kernels::ref {
namespace {

float Widen(float x) { return x; }
float Widen(uint16_t h) { return F16ToF32(h); }

// T: the stored element; Dot: the reference dot of a row of T with floats.
template <typename T, float (*Dot)(const void*, const float*, int64_t)>
void ScoreRows(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
               float scale, float* out, int64_t out_stride) {
  const auto* k = static_cast<const T*>(rows);
  for (int64_t h = 0; h < n_q; ++h) {
    for (int64_t r = 0; r < n_rows; ++r) out[h * out_stride + r] = Dot(k + r * d, q + h * d, d) * scale;
  }
}

template <typename T>
void WeightedSumRows(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                     int64_t n_rows, int64_t d, float* out) {
  const auto* v = static_cast<const T*>(rows);
  for (int64_t h = 0; h < n_q; ++h) {
    for (int64_t r = 0; r < n_rows; ++r) {
      const float w = p[h * p_stride + r];
      for (int64_t i = 0; i < d; ++i) out[h * d + i] += w * Widen(v[r * d + i]);
    }
  }
}

}  // namespace

void ScoreRowsF32(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride) {
  ScoreRows<float, DotRowF32>(q, n_q, rows, n_rows, d, scale, out, out_stride);
}

void ScoreRowsF16(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride) {
  ScoreRows<uint16_t, DotRowF16>(q, n_q, rows, n_rows, d, scale, out, out_stride);
}

void WeightedSumRowsF32(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out) {
  WeightedSumRows<float>(p, p_stride, n_q, rows, n_rows, d, out);
}

void WeightedSumRowsF16(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out) {
  WeightedSumRows<uint16_t>(p, p_stride, n_q, rows, n_rows, d, out);
}

}  // namespace h2o::kernels::ref
