#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace h2o {

int32_t ArgMax(std::span<const float> values) {
  // The largest value first, in 16 independent lanes the compiler turns
  // into vector max instructions (a running index would serialize the
  // loop: greedy decoding of a batch ran it on the driver thread for
  // every sequence, 10% of a 32-sequence step), then its first index.
  // NaN compares false, so it never wins, as in a plain scan.
  constexpr size_t kLanes = 16;
  float lane_max[kLanes];
  std::fill(lane_max, lane_max + kLanes, -std::numeric_limits<float>::infinity());
  const size_t n = values.size();
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) {
      lane_max[j] = values[i + j] > lane_max[j] ? values[i + j] : lane_max[j];
    }
  }
  float best = lane_max[0];
  for (size_t j = 1; j < kLanes; ++j) best = lane_max[j] > best ? lane_max[j] : best;
  for (; i < n; ++i) best = values[i] > best ? values[i] : best;
  for (size_t k = 0; k < n; ++k) {
    if (values[k] == best) return static_cast<int32_t>(k);
  }
  return 0;  // every value NaN
}

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) {
  recent_.reserve(std::max(0, options_.repeat_last_n));
  distinct_.reserve(recent_.capacity());
}

void Sampler::Accept(int32_t id) {
  if (!options_.penalizes() || options_.repeat_last_n <= 0) return;
  if (recent_.size() < static_cast<size_t>(options_.repeat_last_n)) {
    recent_.push_back(id);
    return;
  }
  recent_[recent_next_] = id;
  recent_next_ = (recent_next_ + 1) % recent_.size();
}

std::span<const float> Sampler::Penalized(std::span<const float> logits) {
  const bool penalize = options_.penalizes() && !recent_.empty();
  if (!penalize && options_.logit_bias.empty()) return logits;
  penalized_.assign(logits.begin(), logits.end());
  for (const auto& [id, bias] : options_.logit_bias) {
    if (id >= 0 && static_cast<size_t>(id) < penalized_.size()) penalized_[id] += bias;
  }
  if (!penalize) return penalized_;
  // Each distinct token once, with how often it occurs in the window.
  distinct_.assign(recent_.begin(), recent_.end());
  std::sort(distinct_.begin(), distinct_.end());
  for (size_t i = 0; i < distinct_.size();) {
    size_t j = i;
    while (j < distinct_.size() && distinct_[j] == distinct_[i]) ++j;
    const int32_t id = distinct_[i];
    const auto count = static_cast<float>(j - i);
    i = j;
    if (id < 0 || static_cast<size_t>(id) >= penalized_.size()) continue;
    float& logit = penalized_[id];
    logit = logit > 0.0f ? logit / options_.repeat_penalty : logit * options_.repeat_penalty;
    logit -= count * options_.frequency_penalty + options_.presence_penalty;
  }
  return penalized_;
}

size_t Sampler::Typical(size_t keep) {
  // Probabilities at temperature 1 (it comes last), their entropy, and
  // each candidate's distance from it.
  const double max_logit = candidates_[0].first;
  probs_.resize(keep);
  double sum = 0.0;
  for (size_t i = 0; i < keep; ++i) sum += probs_[i] = std::exp(candidates_[i].first - max_logit);
  double entropy = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    const double p = probs_[i] / sum;
    if (p > 0.0) entropy -= p * std::log(p);
  }
  typical_.resize(keep);
  for (size_t i = 0; i < keep; ++i) {
    const double p = probs_[i] / sum;
    typical_[i] = {std::abs(-std::log(p) - entropy), i};
  }
  std::sort(typical_.begin(), typical_.end());  // nearest first, then by rank
  double cumulative = 0.0;
  size_t cut = 0;
  while (cut < keep) {
    cumulative += probs_[typical_[cut].second] / sum;
    ++cut;
    if (cumulative >= options_.typical_p) break;
  }
  // The kept ones, back in logit order.
  std::vector<size_t>& kept = typical_kept_;
  kept.clear();
  for (size_t i = 0; i < cut; ++i) kept.push_back(typical_[i].second);
  std::sort(kept.begin(), kept.end());
  for (size_t i = 0; i < cut; ++i) candidates_[i] = candidates_[kept[i]];
  return cut;
}

double Sampler::Uniform() {
  // 53 random bits -> [0, 1): std::uniform_real_distribution is
  // implementation-defined, this is not.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

int32_t Sampler::Sample(std::span<const float> raw_logits) {
  const std::span<const float> logits = Penalized(raw_logits);
  if (options_.temperature <= 0.0f) return ArgMax(logits);
  candidates_.clear();
  for (size_t i = 0; i < logits.size(); ++i) {
    candidates_.emplace_back(logits[i], static_cast<int32_t>(i));
  }
  // Highest logit first, lower id first on ties: a total order, so the
  // result does not depend on the sort implementation.
  auto by_logit = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  size_t keep = candidates_.size();
  if (options_.top_k > 0 && static_cast<size_t>(options_.top_k) < keep) {
    keep = options_.top_k;
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  candidates_.resize(keep);

  // Every token banned (a bias of -inf on all): the first, as greedy would.
  if (candidates_[0].first == -std::numeric_limits<float>::infinity()) return candidates_[0].second;
  if (options_.typical_p < 1.0f) keep = Typical(keep);
  const double max_logit = candidates_[0].first;
  if (options_.top_p < 1.0f) {
    // On the untempered probabilities, as llama.cpp (temperature comes last).
    probs_.resize(keep);
    double total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += probs_[i] = std::exp(candidates_[i].first - max_logit);
    double cumulative = 0.0;
    for (size_t i = 0; i < keep; ++i) {
      cumulative += probs_[i] / total;
      if (cumulative >= options_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (options_.min_p > 0.0f) {
    // p_i >= min_p * p_max, on the untempered logits: a prefix of the
    // sorted candidates, the first always kept.
    const double floor = max_logit + std::log(static_cast<double>(options_.min_p));
    size_t cut = 1;
    while (cut < keep && candidates_[cut].first >= floor) ++cut;
    keep = cut;
  }
  std::vector<double>& probs = probs_;
  probs.resize(keep);
  double sum = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    probs[i] = std::exp((candidates_[i].first - max_logit) / options_.temperature);
    sum += probs[i];
  }
  double r = Uniform() * sum;
  for (size_t i = 0; i < keep; ++i) {
    r -= probs[i];
    if (r < 0.0) return candidates_[i].second;
  }
  return candidates_[keep - 1].second;
}

}  // namespace h2o
