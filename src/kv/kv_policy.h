// Eviction policies: which token a full (layer, head) gives up. A policy's
// choice is a pure function of the head's metadata, so it is unit-tested
// without a model; the KvCache applies it. Concrete policies other than
// `full` live in kv/policies.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace h2o {

// Metadata of one (layer, head) as a policy sees it. Positions of present
// tokens are distinct (each position is appended once per head).
struct HeadMetadata {
  const int32_t* pos = nullptr;          // [n_slots]; < 0 marks an empty slot
  const double* score = nullptr;         // [n_slots] accumulated attention
  const float* step_attention = nullptr; // [n_slots] attention of the last query
  int32_t n_slots = 0;
  int32_t count = 0;                     // tokens present
  int32_t newest_pos = -1;               // highest position present
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // "full", "h2o", ... as used in --kv specs.
  virtual std::string name() const = 0;
  // Tokens this policy keeps per (layer, KV head): what the cache's
  // KvCacheConfig::budget should be set to.
  virtual int32_t budget() const = 0;
  // Returns the slot to evict from a head holding more than its budget.
  // Requires meta.count >= 1 (and, for each policy, more tokens than it
  // protects; see policies.h). Thread-safe unless has_state().
  virtual int32_t ChooseVictim(const HeadMetadata& meta) = 0;
  // Whether attention must accumulate scores / record the step's attention.
  virtual bool needs_scores() const { return false; }
  virtual bool needs_step_attention() const { return false; }
  // What the cache multiplies a head's scores by before it appends a
  // token (1: scores only accumulate). Below 1 the scores become an
  // exponential moving average over queries (h2o:score=ema).
  virtual double score_decay() const { return 1.0; }
  // Which of a forward pass's queries feed the scores (with needs_scores()):
  // 0, the default, for all of them, adding up from pass to pass (H2O's
  // accumulated attention); w > 0 for the last min(w, n) queries of each
  // pass of n tokens, into scores the pass first clears (SnapKV's
  // observation window, kv/snapkv.h).
  virtual int32_t observation_window() const { return 0; }
  // Whether ChooseVictim changes the policy object (random's generator,
  // snapkv's selection in progress): then the heads of a cache must choose
  // one after another, in order, never on two threads at once.
  virtual bool has_state() const { return false; }
  // Takes over `other`'s mutable state (random's generator), so a cache
  // copied with KvCache::CopyFrom evicts exactly as the original would.
  // Requires other.name() == name(). Stateless policies have nothing to copy.
  virtual void CopyStateFrom(const EvictionPolicy& other) { (void)other; }
  // The state CopyStateFrom copies, as bytes (a state file's), and back:
  // LoadStateBytes(SaveStateBytes()) of an equal policy evicts from there
  // as the saver would. False: bytes this policy never writes. Snapkv's
  // selection lives only inside one eviction, so between steps it has none.
  virtual std::string SaveStateBytes() const { return {}; }
  virtual bool LoadStateBytes(std::string_view bytes) { return bytes.empty(); }
};

// Never evicts: the cache's budget equals its capacity (the context).
// Position semantics: keys keep their original RoPE position.
class FullPolicy final : public EvictionPolicy {
 public:
  // n_ctx: the context size, which is this policy's budget. Requires >= 1.
  explicit FullPolicy(int32_t n_ctx);
  std::string name() const override { return "full"; }
  int32_t budget() const override { return n_ctx_; }
  int32_t ChooseVictim(const HeadMetadata& meta) override;

 private:
  int32_t n_ctx_;
};

}  // namespace h2o
