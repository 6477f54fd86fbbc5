// Scalar reference norms (RMSNorm, LayerNorm) and the tanh-based
// activations (GELU, GeGLU, soft-capping). The norms accumulate in double
// and round in float where the SIMD backends do (the centered values, the
// scale, each product), so the backends can be held to a few ulp of them;
// the activations are evaluated in double and rounded once.
#include <cmath>

#include "kernels/ref.h"

namespace h2o::kernels::ref {
namespace {

// out[i] = (x[i] - center) * scale * weight[i] (+ bias[i]), scale =
// 1 / sqrt(mean((x - center)^2) + eps). The squares are of the float
// differences the output uses, so a vector far from 0 (LayerNorm's center
// its mean) loses nothing to cancellation.
void NormalizeAbout(float center, const float* x, const float* weight, const float* bias,
                    float* out, int64_t n, float eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - center;
    sum_sq += d * d;
  }
  const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) {
    float y = (x[i] - center) * scale * weight[i];
    if (bias != nullptr) y += bias[i];
    out[i] = y;
  }
}

// sqrt(2 / pi) and GELU's cubic coefficient, as in GPT-2's gelu_new.
constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
constexpr double kGeluCubic = 0.044715;

// 0.5 g (1 + tanh(z)) written as g / (1 + exp(-2z)), the same function:
// for g << 0, 1 + tanh(z) cancels to nothing while the logistic form keeps
// every digit of the tiny result.
double Gelu(double g) {
  const double z = kSqrt2OverPi * (g + kGeluCubic * g * g * g);
  return g / (1.0 + std::exp(-2.0 * z));
}

}  // namespace

void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps) {
  NormalizeAbout(0.0f, x, weight, nullptr, out, n, eps);
}

// The mean rounds to float once, as the centered values that follow use it.
void LayerNorm(const float* x, const float* weight, const float* bias, float* out, int64_t n,
               float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  NormalizeAbout(static_cast<float>(sum / static_cast<double>(n)), x, weight, bias, out, n, eps);
}

void GeluInPlace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(Gelu(x[i]));
}

void GeGluInPlace(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = static_cast<float>(Gelu(gate[i]) * up[i]);
}

void SoftcapInPlace(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(cap * std::tanh(x[i] / double{cap}));
}

}  // namespace h2o::kernels::ref
