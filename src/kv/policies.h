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

// H2O: keeps `heavy` tokens by accumulated score plus the recent window.
// Victim: outside the recent window, the smallest meta.score; ties go to
// the lowest position. Budget: heavy + recent (>= 1).
// Position semantics: original RoPE position by default; supports
// re-rotation to slot order with --kv-pos-shift.
class H2oPolicy final : public EvictionPolicy {
 public:
  H2oPolicy(int32_t heavy, int32_t recent);
  std::string name() const override { return "h2o"; }
  int32_t budget() const override { return heavy_ + recent_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;
  bool needs_scores() const override { return true; }

 private:
  int32_t heavy_;
  int32_t recent_;
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
  void CopyStateFrom(const EvictionPolicy& other) override;

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
