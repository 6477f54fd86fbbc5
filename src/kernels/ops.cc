#include "kernels/ops.h"

#include "core/status.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {

void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps) {
  H2O_CHECK(n >= 1);
  ActiveKernels().rms_norm(x, weight, out, n, eps);
}

void LayerNorm(const float* x, const float* weight, const float* bias, float* out, int64_t n,
               float eps) {
  H2O_CHECK(n >= 1 && weight != nullptr);
  ActiveKernels().layer_norm(x, weight, bias, out, n, eps);
}

void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, const RopeParams& rope) {
  H2O_CHECK(rope.n_rot % 2 == 0 && rope.n_rot <= head_dim);
  H2O_CHECK(rope.n_rot == 0 || rope.inv_freq != nullptr);
  ActiveKernels().rope(x, n_heads, head_dim, pos, rope);
}

void SoftmaxInPlace(float* x, int64_t n) {
  H2O_CHECK(n >= 1);
  ActiveKernels().softmax(x, n);
}

void SwiGluInPlace(float* gate, const float* up, int64_t n) { ActiveKernels().swiglu(gate, up, n); }

void GeluInPlace(float* x, int64_t n) { ActiveKernels().gelu(x, n); }

void GeGluInPlace(float* gate, const float* up, int64_t n) { ActiveKernels().geglu(gate, up, n); }

void SoftcapInPlace(float* x, int64_t n, float cap) {
  H2O_CHECK(cap > 0.0f);
  ActiveKernels().softcap(x, n, cap);
}

}  // namespace h2o::kernels
