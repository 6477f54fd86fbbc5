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
  kNeox,    // pairs (i, i + n_rot/2): GPT-NeoX, Qwen, Phi, ...
};

// A model's rotary embedding, independent of the position: pair i of the
// first n_rot dims of every head turns by pos * inv_freq[i] radians, with
// cos and sin scaled by mscale. Scaling schemes (linear, YaRN, Llama 3's
// rope_freqs) differ only in inv_freq and mscale, so the kernels know none
// of them (model/rope.h computes both). Dims past n_rot are left as they are
// (partial rotary).
struct RopeParams {
  const double* inv_freq = nullptr;  // [n_rot / 2]
  int64_t n_rot = 0;                 // even, at most head_dim
  float mscale = 1.0f;               // YaRN's magnitude correction
  RopeMode mode = RopeMode::kNormal;
};

// Rotates each head of x ([n_heads][head_dim], in place) for position pos:
// (a, b) -> (a c - b s, a s + b c) with c = mscale cos(theta_i), s = mscale
// sin(theta_i), theta_i = pos * inv_freq[i]. Angles, cos and sin are
// computed in double precision. Requires rope.n_rot even and <= head_dim.
void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, const RopeParams& rope);

// x = softmax(x), subtracting the max first so large inputs cannot
// overflow. Requires n >= 1 and at least one element > -inf (masked -inf
// entries become exactly 0).
void SoftmaxInPlace(float* x, int64_t n);

// gate[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)).
void SwiGluInPlace(float* gate, const float* up, int64_t n);

}  // namespace h2o::kernels
