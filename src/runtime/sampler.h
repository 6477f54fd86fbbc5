// Next-token sampling: greedy, or temperature + top-k + top-p with a seeded
// generator whose output depends only on the seed (not on the C++ library),
// so the same --seed reproduces the same text everywhere.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace h2o {

// Applied in llama.cpp's order: logit bias and the penalties (greedy too),
// then top-k, typical-p, top-p and min-p (each on the untempered
// probabilities of what the one before kept), then temperature.
struct SamplerOptions {
  float temperature = 0.8f;  // <= 0: greedy
  int32_t top_k = 40;        // <= 0: all tokens
  float top_p = 0.95f;       // >= 1: no nucleus cut
  // Keeps tokens whose probability is at least min_p times the most likely
  // one's (before temperature, as llama.cpp); <= 0: off.
  float min_p = 0.0f;
  // Each distinct token among the last repeat_last_n accepted ones has its
  // logit divided by repeat_penalty when positive, multiplied when not
  // (llama.cpp's rule); 1: off.
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  // OpenAI's penalties over the same window: a token's logit loses
  // frequency_penalty per time it occurs there and presence_penalty once
  // if it occurs at all; 0: off.
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  // Locally typical sampling (Meister et al. 2022): keeps the tokens whose
  // surprisal is nearest the distribution's entropy, fewest first, until
  // their probability reaches typical_p; >= 1: off.
  float typical_p = 1.0f;
  // Added to a token's logit before anything else (-inf: never sampled).
  std::vector<std::pair<int32_t, float>> logit_bias = {};
  uint64_t seed = 0;

  bool penalizes() const {
    return repeat_penalty != 1.0f || frequency_penalty != 0.0f || presence_penalty != 0.0f;
  }
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);
  // Picks the next token id from logits. Greedy picks the lowest id among
  // equal maxima. Not thread-safe (advances the generator).
  int32_t Sample(std::span<const float> logits);
  // Records a token of the sequence (prompt or generated) for the repeat
  // penalty. Sample does not record what it returns: the caller accepts it.
  void Accept(int32_t id);

 private:
  double Uniform();  // [0, 1)
  // logits with the bias and penalties applied (logits itself when none is on).
  std::span<const float> Penalized(std::span<const float> logits);
  // Cuts candidates_[0, keep) (sorted by logit) to the locally typical set,
  // sorted by logit again; returns how many remain.
  size_t Typical(size_t keep);

  SamplerOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused across calls
  std::vector<double> probs_;                          // reused across calls
  std::vector<int32_t> recent_;                        // the last repeat_last_n accepted, a ring
  size_t recent_next_ = 0;                             // where the next accepted one goes
  std::vector<int32_t> distinct_;                      // reused across calls
  std::vector<float> penalized_;                       // reused across calls
  std::vector<std::pair<double, size_t>> typical_;     // reused across calls
  std::vector<size_t> typical_kept_;                   // reused across calls
};

// Index of the largest value, lowest index on ties.
int32_t ArgMax(std::span<const float> values);

}  // namespace h2o
