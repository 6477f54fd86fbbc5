// Scalar reference attention row kernels: one reference dot or axpy per
// row, in row order, exactly what the per-slot attention loop did before
// the SIMD backends got whole-run kernels.
#include "kernels/fp16.h"
#include "kernels/ref.h"

namespace h2o::kernels::ref {

void ScoreRowsF32(const float* q, const void* rows, int64_t n_rows, int64_t d, float scale,
                  float* out) {
  const auto* k = static_cast<const float*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) out[r] = DotRowF32(k + r * d, q, d) * scale;
}

void ScoreRowsF16(const float* q, const void* rows, int64_t n_rows, int64_t d, float scale,
                  float* out) {
  const auto* k = static_cast<const uint16_t*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) out[r] = DotRowF16(k + r * d, q, d) * scale;
}

void WeightedSumRowsF32(const float* p, const void* rows, int64_t n_rows, int64_t d, float* out) {
  const auto* v = static_cast<const float*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) Axpy(p[r], v + r * d, out, d);
}

void WeightedSumRowsF16(const float* p, const void* rows, int64_t n_rows, int64_t d, float* out) {
  const auto* v = static_cast<const uint16_t*>(rows);
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t i = 0; i < d; ++i) out[i] += p[r] * F16ToF32(v[r * d + i]);
  }
}

}  // namespace h2o::kernels::ref
