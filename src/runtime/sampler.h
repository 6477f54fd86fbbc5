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

// Applied in llama.cpp's order: repeat penalty (greedy too), top-k, top-p,
// min-p, temperature.
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
  uint64_t seed = 0;
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
  // logits with the repeat penalty applied (logits itself when it is off).
  std::span<const float> Penalized(std::span<const float> logits);

  SamplerOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused across calls
  std::vector<double> probs_;                          // reused across calls
  std::vector<int32_t> recent_;                        // the last repeat_last_n accepted, a ring
  size_t recent_next_ = 0;                             // where the next accepted one goes
  std::vector<int32_t> distinct_;                      // reused across calls
  std::vector<float> penalized_;                       // reused across calls
};

// Index of the largest value, lowest index on ties.
int32_t ArgMax(std::span<const float> values);

}  // namespace h2o
