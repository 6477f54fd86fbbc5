// The evicting policies of DESIGN.md section 3. Each ChooseVictim() is a
// pure function of HeadMetadata (RandomPolicy also reads its own seeded
// generator) and needs no heap allocation on the engine's path. Ties
// always go to the lowest position. Constructors H2O_CHECK their arguments
// (user input is validated earlier, by ResolveKvSpec in kv/kv_spec.h).
//
// "The recent window" below means the `recent` highest positions among the
// present tokens; those are never victims. Every policy that protects a
// window requires meta.count > recent when asked for a victim, which the
// cache guarantees because it only evicts while count > budget >= recent.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "kv/kv_policy.h"

namespace h2o {

// Keeps the last `recent` tokens (sliding window). Victim: the lowest
// position present. Budget: recent (>= 1).
// Position semantics: keys keep their original RoPE position.
class LocalPolicy final : public EvictionPolicy {
 public:
  explicit LocalPolicy(int32_t recent);
  std::string name() const override { return "local"; }
  int32_t budget() const override { return recent_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;

 private:
  int32_t recent_;
};

// StreamingLLM: positions 0..sinks-1 are never evicted; victim is the
// lowest position >= sinks. Budget: sinks + recent (recent >= 1).
// Position semantics: original RoPE position by default; supports
// re-rotation to slot order with --kv-pos-shift.
class SinkPolicy final : public EvictionPolicy {
 public:
  SinkPolicy(int32_t sinks, int32_t recent);
  std::string name() const override { return "sink"; }
  int32_t budget() const override { return sinks_ + recent_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;

 private:
  int32_t sinks_;
  int32_t recent_;
};

// What H2O ranks its heavy-hitter candidates by (--kv h2o:...,score=...).
// Each is a victim rule over HeadMetadata; ties go to the lowest position.
//   kSum   meta.score, the attention a token has received from every query
//          since it arrived: the paper's rule (Zhang et al., "H2O:
//          Heavy-Hitter Oracle for Efficient Generative Inference of Large
//          Language Models", NeurIPS 2023, arXiv 2306.14048).
//   kMean  meta.score / (meta.newest_pos - pos + 1): the same sum divided
//          by the number of queries that could see the token (every query
//          at a position >= its own attends to it; the engine queries
//          every position it appends, so after a pass these are
//          newest_pos - pos + 1). Under a causal mask an older token has
//          had more queries to collect attention from, so the sum favours
//          old tokens; the mean compares tokens of different ages per
//          query (the bias A2SF and AhaKV describe: Jo & Shin, arXiv
//          2407.20485; Gu et al., arXiv 2506.03762).
//   kEma   meta.score kept as an exponential moving average: before each
//          new token is appended, the cache multiplies a head's scores by
//          `decay` (score_decay()), and attention then adds as for kSum, so
//          after query T a token's score is sum over queries t of
//          decay^(T - t) * attention_t: A2SF's "accumulative attention
//          score with forgetting factor" (Jo & Shin 2024, arXiv
//          2407.20485). A pass of n > 1 tokens (--chunk) applies its n
//          decays first and then adds its n queries' attention undecayed;
//          with one token per pass (perplexity's default, decoding) it is
//          the exact per-query average.
struct H2oScore {
  enum class Kind { kSum, kMean, kEma };
  Kind kind = Kind::kSum;
  double decay = 0.9;  // kEma only; 0 < decay < 1

  static H2oScore Mean() { return {Kind::kMean, 0.9}; }
  static H2oScore Ema(double decay) { return {Kind::kEma, decay}; }
};

// H2O: keeps `heavy` tokens by accumulated score plus the recent window.
// Victim: outside the recent window, the smallest score (meta.score, or
// its mean or moving average: H2oScore); ties go to the lowest position.
// Budget: heavy + recent (>= 1).
// Position semantics: original RoPE position by default; supports
// re-rotation to slot order with --kv-pos-shift.
class H2oPolicy final : public EvictionPolicy {
 public:
  H2oPolicy(int32_t heavy, int32_t recent, H2oScore score = {});
  std::string name() const override { return "h2o"; }
  int32_t budget() const override { return heavy_ + recent_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;
  bool needs_scores() const override { return true; }
  double score_decay() const override {
    return score_.kind == H2oScore::Kind::kEma ? score_.decay : 1.0;
  }
  const H2oScore& score() const { return score_; }

 private:
  int32_t heavy_;
  int32_t recent_;
  H2oScore score_;
};

// Heavy hitters only (H2O with recent = 0): victim is the smallest score
// over all present tokens, ties to the lowest position. Budget: heavy (>= 1).
// Position semantics: keys keep their original RoPE position.
class H2onlyPolicy final : public EvictionPolicy {
 public:
  explicit H2onlyPolicy(int32_t heavy);
  std::string name() const override { return "h2only"; }
  int32_t budget() const override { return heavy_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;
  bool needs_scores() const override { return true; }

 private:
  int32_t heavy_;
};

// TOVA: victim is the token with the smallest meta.step_attention (the last
// query's attention summed over the group's query heads), ties to the
// lowest position. Budget: k (>= 1).
// Position semantics: keys keep their original RoPE position.
class TovaPolicy final : public EvictionPolicy {
 public:
  explicit TovaPolicy(int32_t k);
  std::string name() const override { return "tova"; }
  int32_t budget() const override { return k_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;
  bool needs_step_attention() const override { return true; }

 private:
  int32_t k_;
};

// Random baseline: victim uniform among the present tokens outside the
// recent window. Budget: k + recent (>= 1).
// The draw is reproducible across standard libraries: std::mt19937_64
// (fully specified by the standard) seeded with `seed`, and an index in
// [0, n) taken by rejection sampling: draw r until r >= 2^64 mod n, then
// use r % n (every residue then has the same number of preimages). The
// index counts candidates in slot order. One generator serves every
// (layer, head) of a cache, in the order the cache asks.
// Position semantics: keys keep their original RoPE position.
class RandomPolicy final : public EvictionPolicy {
 public:
  RandomPolicy(int32_t k, int32_t recent, uint64_t seed);
  std::string name() const override { return "random"; }
  int32_t budget() const override { return k_ + recent_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;
  bool has_state() const override { return true; }
  void CopyStateFrom(const EvictionPolicy& other) override;
  std::string SaveStateBytes() const override;  // the generator's state as text
  bool LoadStateBytes(std::string_view bytes) override;

  // The documented uniform draw in [0, n) from `rng`. Requires n >= 1.
  static uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n);

 private:
  int32_t k_;
  int32_t recent_;
  std::mt19937_64 rng_;
};

// A threshold that splits the present tokens: those with pos >= it are
// exactly the recent window (the `recent` highest positions). Returns
// INT64_MAX when recent == 0 (nothing protected). Requires distinct
// positions and meta.count > recent. One pass when the window is the
// contiguous run ending at meta.newest_pos (always so in the engine);
// otherwise a binary search over positions. Allocates nothing.
int64_t RecentWindowStart(const HeadMetadata& meta, int32_t recent);

}  // namespace h2o
