// Scalar reference attention row kernels: one reference dot or axpy per
// head and row, in row order, exactly what the per-slot attention loop did
// before the SIMD backends got whole-run kernels.
#include "kernels/fp16.h"
#include "kernels/ref.h"

namespace h2o::kernels::ref {

void ScoreRowsF32(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride) {
  const auto* k = static_cast<const float*>(rows);
  for (int64_t h = 0; h < n_q; ++h) {
    for (int64_t r = 0; r < n_rows; ++r) {
      out[h * out_stride + r] = DotRowF32(k + r * d, q + h * d, d) * scale;
    }
  }
}

void ScoreRowsF16(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride) {
  const auto* k = static_cast<const uint16_t*>(rows);
  for (int64_t h = 0; h < n_q; ++h) {
    for (int64_t r = 0; r < n_rows; ++r) {
      out[h * out_stride + r] = DotRowF16(k + r * d, q + h * d, d) * scale;
    }
  }
}

void WeightedSumRowsF32(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out) {
  const auto* v = static_cast<const float*>(rows);
  for (int64_t h = 0; h < n_q; ++h) {
    for (int64_t r = 0; r < n_rows; ++r) Axpy(p[h * p_stride + r], v + r * d, out + h * d, d);
  }
}

void WeightedSumRowsF16(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out) {
  const auto* v = static_cast<const uint16_t*>(rows);
  for (int64_t h = 0; h < n_q; ++h) {
    for (int64_t r = 0; r < n_rows; ++r) {
      const float w = p[h * p_stride + r];
      for (int64_t i = 0; i < d; ++i) out[h * d + i] += w * F16ToF32(v[r * d + i]);
    }
  }
}

}  // namespace h2o::kernels::ref
