// Elementwise and per-vector operations of a transformer layer, on float
// activations. All route through ActiveKernels(), are thread-safe (they
// touch only their arguments) and allocate nothing.
#pragma once

#include <cstdint>

namespace h2o::kernels {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i] for i in [0, n).
// Requires n >= 1. out may alias x (not weight).
void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps);

// out[i] = (x[i] - mean) / sqrt(var + eps) * weight[i] + bias[i] for i in
// [0, n), mean and var (population) over the n elements: ggml_norm
// followed by a multiply and an add, as GPT-2 and GPT-NeoX use it. bias
// may be null (no bias); weight may not. The variance is of the centered
// values (two passes), so it stays exact for inputs far from 0. Requires
// n >= 1. out may alias x (not weight or bias).
void LayerNorm(const float* x, const float* weight, const float* bias, float* out, int64_t n,
               float eps);

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

// x[i] = gelu(x[i]) with the tanh approximation gelu(x) = 0.5 x (1 +
// tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3): GPT-2's gelu_new, Gemma's
// gelu_pytorch_tanh, what llama.cpp's ggml_gelu computes. Evaluated in
// float as x / (1 + exp(-2z)), the same function without 1 + tanh's
// cancellation where x << 0 (the reference backend: in double, rounded
// once). SIMD: within 2 ulp for x >= 0; for x < 0 the float rounding of 2z
// passes into exp, at most 2.4 (1 + |2z|) ulp measured (x = -3, gelu =
// -0.0036: up to 19 ulp, 2e-6 relative), far below the fp16 difference next.
// Below x = -10.07 (|gelu| < 2.4e-38) SIMD gives -0; gelu(-inf) is NaN.
// llama.cpp (GGML_GELU_FP16) rounds x to fp16 and looks fp16(gelu) up in a
// table for |x| < 10 (0 below, x above): it differs from this by up to
// 3.9e-3 absolute (half an fp16 ulp near |x| = 8), about 1e-3 relative for
// x > 1 and up to 4e-3 relative where |gelu| >= 1e-3 (x near -3.4);
// tests/kernels/act_test.cc measures it.
void GeluInPlace(float* x, int64_t n);

// gate[i] = gelu(gate[i]) * up[i] (Gemma's GeGLU feed-forward), gelu as
// in GeluInPlace.
void GeGluInPlace(float* gate, const float* up, int64_t n);

// x[i] = cap * tanh(x[i] / cap), Gemma 2's logit soft-capping (llama.cpp:
// scale by 1/cap, tanh, scale by cap). tanh within 2 ulp (1.31 measured)
// over the whole float range, exactly +-1 where it saturates (|x / cap| >=
// 9.01), x itself for tiny x, -0 for -0; x / cap and the product round
// once each. Requires cap > 0.
void SoftcapInPlace(float* x, int64_t n, float cap);

}  // namespace h2o::kernels
