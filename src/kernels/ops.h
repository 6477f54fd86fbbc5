// Elementwise and per-vector operations of a transformer layer, on float
// activations. All route through ActiveKernels(), are thread-safe (they
// touch only their arguments) and allocate nothing.
#pragma once

#include <cstdint>

namespace h2o::kernels {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i] for i in [0, n).
// Requires n >= 1. out may alias x (not weight).
void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps);

// Which element pairs a rotary embedding rotates.
enum class RopeMode {
  kNormal,  // pairs (2i, 2i+1): GGML mode 0, LLaMA-family GGUF files
  kNeox,    // pairs (i, i + head_dim/2): GPT-NeoX, Qwen, Phi, ...
};

// Rotates each head of x ([n_heads][head_dim], in place) for position pos:
// pair i (i in [0, head_dim/2)) turns by theta_i = pos * freq_scale *
// freq_base^(-2i/head_dim), (a, b) -> (a cos - b sin, a sin + b cos).
// Requires head_dim even. Angles are computed in double precision.
void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, float freq_base,
                 float freq_scale, RopeMode mode);

// x = softmax(x), subtracting the max first so large inputs cannot
// overflow. Requires n >= 1 and at least one element > -inf (masked -inf
// entries become exactly 0).
void SoftmaxInPlace(float* x, int64_t n);

// gate[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)).
void SwiGluInPlace(float* gate, const float* up, int64_t n);

}  // namespace h2o::kernels
