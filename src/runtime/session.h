// Session: one sequence with an engine of its own, for the commands that
// run one stream at a time. It is an Engine (thread pool, activations) plus
// one Sequence (KV cache, position, logits); code that runs several
// sequences together uses Engine and Sequence directly (runtime/engine.h).
// One Session is used by one thread at a time; many may share one Model.
//
// The cache follows the model's layers (runtime/kv_config.h): a
// sliding-window layer (HParams::window) keeps exactly its window, the KV
// policy governs the global layers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/status.h"
#include "model/model.h"
#include "runtime/engine.h"
#include "runtime/sequence.h"

namespace h2o {

struct SessionOptions : SequenceOptions {
  int32_t n_threads = 1;
};

using SessionSnapshot = SequenceSnapshot;

class Session {
 public:
  // Errors: bad option values (one line, naming the option).
  static Result<std::unique_ptr<Session>> Create(const Model& model, const SessionOptions& options);

  // Feeds tokens at the next positions, in chunks of at most max_chunk,
  // evicting over the budget after each chunk. Afterwards logits() holds
  // the last token's logits, or with kAllTokens (requires tokens.size() <=
  // max_chunk) every token's. Errors: token id out of range, or the
  // sequence would pass n_ctx (unless kv_pos_shift); nothing is fed then.
  Status Eval(std::span<const int32_t> tokens, LogitsFor which = LogitsFor::kLastToken) {
    return engine_->Eval(*sequence_, tokens, which);
  }

  // [1 or n_tokens][n_vocab] from the last Eval.
  std::span<const float> logits() const { return sequence_->logits(); }
  // The last token's logits from the last Eval.
  std::span<const float> last_logits() const { return sequence_->last_logits(); }

  int32_t n_past() const { return sequence_->n_past(); }
  int32_t n_ctx() const { return sequence_->n_ctx(); }
  int32_t max_chunk() const { return sequence_->max_chunk(); }
  const Model& model() const { return engine_->model(); }
  const KvCache& cache() const { return sequence_->cache(); }
  const KvPlan& kv_plan() const { return sequence_->kv_plan(); }
  Engine& engine() { return *engine_; }
  Sequence& sequence() { return *sequence_; }

  // Forgets the sequence; buffers stay allocated.
  void Reset() { sequence_->Reset(); }

  // See Sequence::set_attention_observer.
  void set_attention_observer(AttentionObserver* observer) {
    sequence_->set_attention_observer(observer);
  }

  // See Sequence::Save / Restore.
  void Save(SessionSnapshot& snapshot) const { sequence_->Save(snapshot); }
  void Restore(const SessionSnapshot& snapshot) { sequence_->Restore(snapshot); }
  // Distinct for every Session a process creates (never reused).
  uint64_t id() const { return sequence_->id(); }

 private:
  Session(std::unique_ptr<Engine> engine, std::unique_ptr<Sequence> sequence)
      : engine_(std::move(engine)), sequence_(std::move(sequence)) {}

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Sequence> sequence_;
};

}  // namespace h2o
