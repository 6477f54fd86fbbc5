#include "kernels/ops.h"

#include "core/status.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {

void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps) {
  H2O_CHECK(n >= 1);
  ActiveKernels().rms_norm(x, weight, out, n, eps);
}

void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, float freq_base,
                 float freq_scale, RopeMode mode) {
  H2O_CHECK(head_dim % 2 == 0);
  ActiveKernels().rope(x, n_heads, head_dim, pos, freq_base, freq_scale, mode);
}

void SoftmaxInPlace(float* x, int64_t n) {
  H2O_CHECK(n >= 1);
  ActiveKernels().softmax(x, n);
}

void SwiGluInPlace(float* gate, const float* up, int64_t n) { ActiveKernels().swiglu(gate, up, n); }

}  // namespace h2o::kernels
