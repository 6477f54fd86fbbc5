// Sequence: one sequence an Engine decodes: its KV cache (its own policy and
// budget), position, rotary embedding and last logits. Created by
// Engine::NewSequence; fed by Engine::Forward / Engine::Eval. A Sequence is
// used by one thread at a time, the engine's driver.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor_type.h"
#include "kv/kv_cache.h"
#include "kv/kv_spec.h"
#include "model/attention_observer.h"
#include "model/model.h"

namespace h2o {

struct SequenceOptions {
  int32_t n_ctx = 0;      // most positions a sequence may reach; 0 = model's context_length
  int32_t max_chunk = 0;  // most tokens per forward pass; 0 = n_ctx (whole prompt at once)
  KvTypes kv_types;  // K and V element types (default f16)
  KvPlan kv;  // eviction policy and budget (default: full cache)
  // Re-rotate cached keys to their rank in the cache (sink and h2o only):
  // positions then never pass the cache capacity, so a sequence may run
  // past n_ctx. A sliding-window layer holds a contiguous run of positions,
  // so ranks there differ exactly as positions do: its attention is what
  // it would be without the shift.
  bool kv_pos_shift = false;
  // Back the cache's rows with RAM at creation (KvCache::CommitRows), for a
  // cache whose whole size is reserved anyway (the scheduler's admission).
  // Off, a cache sized for a long declared context takes memory only as
  // tokens arrive.
  bool commit_kv_rows = false;
};

// A saved sequence state (KV cache and position); see Sequence::Save.
struct SequenceSnapshot {
  std::unique_ptr<KvCache> cache;
  int32_t n_past = -1;       // -1: nothing saved yet
  uint64_t sequence_id = 0;  // Sequence::id() of the saver; 0: none
};

// A sequence's state taken out of it, compact (kv/kv_cache_state.h), with
// the logits after its last token: what the prompt cache keeps, and a
// sequence of another request (same model, KV plan and types) resumes.
struct SequenceState {
  KvCacheState cache;
  std::string kv_plan;  // KvPlan::Describe() of the saver: a state resumes only its own plan
  int32_t n_past = 0;
  bool pos_shift = false;
  std::vector<float> last_logits;  // empty: none (then something must be fed)

  size_t Bytes() const { return cache.Bytes() + last_logits.size() * sizeof(float); }
};

class Sequence {
 public:
  int32_t n_past() const { return n_past_; }
  int32_t n_ctx() const { return n_ctx_; }
  int32_t max_chunk() const { return max_chunk_; }
  bool pos_shift() const { return pos_shift_; }
  const KvCache& cache() const { return *cache_; }
  const KvPlan& kv_plan() const { return kv_plan_; }
  // kv_plan().Describe(), made once: what a kept state is matched by.
  const std::string& kv_plan_text() const { return kv_plan_text_; }
  const Model& model() const { return model_; }
  // Distinct for every Sequence a process creates (never reused).
  uint64_t id() const { return id_; }

  // [1 or n_tokens][n_vocab]: the logits of the last forward that asked
  // for this sequence's logits.
  std::span<const float> logits() const { return {logits_.data(), logits_rows_ * n_vocab_}; }
  std::span<const float> last_logits() const;

  // Forgets the sequence; buffers stay allocated.
  void Reset();

  // Continues `from` (a sequence of the same model and KV types): this one,
  // reset, takes every token `from`'s cache kept and its position, and goes
  // on from there under its own policy. A cache compressed once and then
  // left alone is `from` evicted to its budget continuing in a sequence
  // whose budget holds what it kept plus what comes next (eval's
  // kvpress-style protocols). Checked: the same model, types and windows,
  // and room within each layer's budget.
  void ContinueFrom(const Sequence& from);

  // Save copies the sequence state into `snapshot` (allocating its cache
  // when it is empty or holds another sequence's state); Restore puts it
  // back, after which every forward gives the same logits and evictions as
  // right after the Save. Scoring several continuations of one prefix then
  // runs the prefix once. Restore requires a snapshot this sequence saved
  // (checked). Logits are not saved.
  void Save(SequenceSnapshot& snapshot) const;
  void Restore(const SequenceSnapshot& snapshot);

  // SaveState copies the sequence's state out (compact); LoadState makes
  // this sequence, of any request, continue exactly as the saver would
  // have after the same tokens, when CanLoadState (the same model, KV
  // plan, types and pos-shift, and room in the context; budgets as
  // KvCache::CanLoadState allows).
  void SaveState(SequenceState& state) const;
  bool CanLoadState(const SequenceState& state) const;
  void LoadState(const SequenceState& state);

  // Later forwards report every query head's attention probabilities to
  // `observer` (null, the default: none). It must outlive those forwards
  // and may be called from the engine's pool threads.
  void set_attention_observer(AttentionObserver* observer) { observer_ = observer; }
  AttentionObserver* attention_observer() const { return observer_; }

  // Room for `rows` rows of logits (grows once; Engine calls it).
  float* LogitsBuffer(size_t rows);
  std::span<const RotaryEmbedding* const> ropes() const { return ropes_; }
  KvCache& mutable_cache() { return *cache_; }
  void Advance(int32_t n_tokens) { n_past_ += n_tokens; }
  // Whether n_tokens more fit in the context (always with pos-shift).
  bool HasRoomFor(int64_t n_tokens) const;

  // Resolves and checks the options against the model. Errors: one line
  // naming the option. Use Engine::NewSequence, which also sizes the
  // engine for it.
  static Result<std::unique_ptr<Sequence>> Create(const Model& model,
                                                  const SequenceOptions& options,
                                                  int32_t max_chunk_limit);

  // The bytes a sequence of these options allocates for its KV cache (all
  // of it, up front, whatever it later holds: full, its context; an
  // evicting policy, budget + chunk): what admission reserves for it.
  // Errors as Create.
  static Result<size_t> KvBytes(const Model& model, const SequenceOptions& options,
                                int32_t max_chunk_limit);

 private:
  Sequence(const Model& model, const SequenceOptions& resolved, std::unique_ptr<KvCache> cache);

  const Model& model_;
  uint64_t id_;
  int32_t n_ctx_;
  int32_t max_chunk_;
  bool pos_shift_;
  KvPlan kv_plan_;
  std::string kv_plan_text_;
  int32_t n_past_ = 0;
  size_t n_vocab_;
  std::unique_ptr<KvCache> cache_;
  std::vector<const RotaryEmbedding*> ropes_;
  std::vector<float> logits_;
  size_t logits_rows_ = 0;
  AttentionObserver* observer_ = nullptr;
};

}  // namespace h2o
