// A model's rotary embedding in the form the kernels take (per-pair
// frequencies and a magnitude factor), computed once at load from the
// hyperparameters and Llama 3's rope_freqs tensor. The scaling schemes
// llama.cpp applies live here and only here.
#pragma once

#include <span>
#include <vector>

#include "kernels/ops.h"
#include "model/hparams.h"

namespace h2o {

class RotaryEmbedding {
 public:
  // freq_factors: one divisor per rotated pair (rope_freqs.weight, n_rot / 2
  // values), or empty. Pair i turns by pos * inv_freq[i] with
  //   base_i   = freq_base^(-2i / n_rot) / freq_factors[i]
  //   linear:    inv_freq = freq_scale * base_i
  //   YaRN:      inv_freq = base_i * (freq_scale (1 - r_i) + r_i), r_i the
  //              ramp from 1 (fast pairs: not scaled) to 0 (slow pairs:
  //              scaled like linear) between the pairs that turn beta_fast
  //              and beta_slow times over n_ctx_orig, and cos/sin scaled by
  //              1 + 0.1 ln(1 / freq_scale) when freq_scale < 1
  //   none:      freq_scale is 1
  // and every scheme's cos/sin scaled by rope_attn_factor. This is what
  // llama.cpp (b7847) computes for these files, in double precision.
  RotaryEmbedding(const HParams& hp, std::span<const float> freq_factors);

  kernels::RopeParams params() const {
    return {inv_freq_.data(), static_cast<int64_t>(inv_freq_.size()) * 2, mscale_, mode_};
  }
  std::span<const double> inv_freq() const { return inv_freq_; }
  float mscale() const { return mscale_; }

 private:
  std::vector<double> inv_freq_;
  float mscale_ = 1.0f;
  kernels::RopeMode mode_ = kernels::RopeMode::kNormal;
};

}  // namespace h2o
