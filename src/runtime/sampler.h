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

struct SamplerOptions {
  float temperature = 0.8f;  // <= 0: greedy
  int32_t top_k = 40;        // <= 0: all tokens
  float top_p = 0.95f;       // >= 1: no nucleus cut
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);
  // Picks the next token id from logits. Greedy picks the lowest id among
  // equal maxima. Not thread-safe (advances the generator).
  int32_t Sample(std::span<const float> logits);

 private:
  double Uniform();  // [0, 1)

  SamplerOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, int32_t>> candidates_;  // reused across calls
  std::vector<double> probs_;                          // reused across calls
};

// Index of the largest value, lowest index on ties.
int32_t ArgMax(std::span<const float> values);

}  // namespace h2o
