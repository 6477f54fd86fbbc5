#include "model/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/status.h"

namespace h2o {
namespace {

// The rotated dim (counted in elements, as llama.cpp's ggml_rope_yarn_corr_dim)
// at which a pair turns n_turns times over n_ctx_orig positions.
double CorrectionDim(int n_rot, int n_ctx_orig, double n_turns, double base) {
  return n_rot * std::log(n_ctx_orig / (n_turns * 2 * std::numbers::pi)) / (2 * std::log(base));
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(const HParams& hp, std::span<const float> freq_factors)
    : mode_(hp.rope_mode) {
  const int n_pairs = hp.n_rot / 2;
  H2O_CHECK(freq_factors.empty() || static_cast<int>(freq_factors.size()) == n_pairs);
  const double base = hp.rope_freq_base;
  const double scale = hp.rope_scaling == RopeScalingType::kNone ? 1.0 : hp.rope_freq_scale;
  const bool yarn = hp.rope_scaling == RopeScalingType::kYarn;
  double low = 0, high = 0;
  if (yarn) {
    low =
        std::max(0.0, std::floor(CorrectionDim(hp.n_rot, hp.n_ctx_orig, hp.yarn_beta_fast, base)));
    high = std::min(hp.n_rot - 1.0,
                    std::ceil(CorrectionDim(hp.n_rot, hp.n_ctx_orig, hp.yarn_beta_slow, base)));
  }
  inv_freq_.resize(static_cast<size_t>(n_pairs));
  for (int i = 0; i < n_pairs; ++i) {
    double f = std::pow(base, -2.0 * i / hp.n_rot);
    if (!freq_factors.empty()) f /= freq_factors[i];
    double mix = 0.0;  // 1: keep the frequency (extrapolate), 0: scale it
    if (yarn) mix = 1.0 - std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0);
    inv_freq_[i] = f * (scale * (1.0 - mix) + mix);
  }
  double mscale = hp.rope_attn_factor;
  if (yarn && scale < 1.0) mscale *= 1.0 + 0.1 * std::log(1.0 / scale);
  mscale_ = static_cast<float>(mscale);
}

}  // namespace h2o
