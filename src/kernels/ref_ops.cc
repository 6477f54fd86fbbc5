// Scalar reference versions of the per-vector operations (the norms and
// the GELU family are in ref_norm_act.cc). Reductions over a whole vector
// (the softmax normalizer) accumulate in double: they run once per vector,
// so the precision is free here.
#include <algorithm>
#include <cmath>

#include "kernels/ref.h"

namespace h2o::kernels::ref {

void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, const RopeParams& rope) {
  const int64_t half = rope.n_rot / 2;
  // Element offsets of pair i within a head, and of its partner.
  const int64_t stride = rope.mode == RopeMode::kNormal ? 2 : 1;
  const int64_t partner = rope.mode == RopeMode::kNormal ? 1 : half;
  for (int64_t i = 0; i < half; ++i) {
    // One angle per pair, shared by all heads.
    const double theta = static_cast<double>(pos) * rope.inv_freq[i];
    const double c = std::cos(theta) * rope.mscale;
    const double s = std::sin(theta) * rope.mscale;
    for (int64_t h = 0; h < n_heads; ++h) {
      float* a = x + h * head_dim + i * stride;
      float* b = a + partner;
      const double a0 = *a;
      const double b0 = *b;
      *a = static_cast<float>(a0 * c - b0 * s);
      *b = static_cast<float>(a0 * s + b0 * c);
    }
  }
}

void SoftmaxInPlace(float* x, int64_t n) {
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = std::max(max, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void SwiGluInPlace(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void GemmF32(const float* w, int64_t n_rows, const float* x, int64_t n_tokens, int64_t cols,
             float* y, int64_t ldy) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < n_rows; ++r)
      y[t * ldy + r] = DotRowF32(w + r * cols, x + t * cols, cols);
  }
}

}  // namespace h2o::kernels::ref
