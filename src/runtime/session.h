// Session: one sequence being decoded: its KV cache, activations and
// position. Owns its thread pool; one Session is used by one thread at a
// time. Many Sessions may share one Model.
//
// The cache follows the model's layers (runtime/kv_config.h): a
// sliding-window layer (HParams::window) keeps exactly its window, the KV
// policy governs the global layers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/status.h"
#include "core/tensor_type.h"
#include "kernels/thread_pool.h"
#include "kv/kv_cache.h"
#include "kv/kv_spec.h"
#include "model/forward.h"
#include "model/model.h"

namespace h2o {

struct SessionOptions {
  int32_t n_ctx = 0;      // most positions a sequence may reach; 0 = model's context_length
  int32_t n_threads = 1;
  int32_t max_chunk = 0;  // most tokens per forward pass; 0 = n_ctx (whole prompt at once)
  TensorType kv_type = TensorType::kF16;
  KvPlan kv;              // eviction policy and budget (default: full cache)
  // Re-rotate cached keys to their rank in the cache (sink and h2o only):
  // positions then never pass the cache capacity, so a sequence may run
  // past n_ctx. A sliding-window layer holds a contiguous run of positions,
  // so ranks there differ exactly as positions do: its attention is what
  // it would be without the shift.
  bool kv_pos_shift = false;
};

// A saved sequence state (KV cache and position) of one Session; see
// Session::Save.
struct SessionSnapshot {
  std::unique_ptr<KvCache> cache;
  int32_t n_past = -1;             // -1: nothing saved yet
  uint64_t session_id = 0;         // Session::id() of the saver; 0: none
};

class Session {
 public:
  // Errors: bad option values (one line, naming the option).
  static Result<std::unique_ptr<Session>> Create(const Model& model, const SessionOptions& options);

  // Feeds tokens at the next positions, in chunks of at most max_chunk,
  // evicting over the budget after each chunk. Afterwards logits() holds
  // the last token's logits, or with kAllTokens (requires tokens.size() <=
  // max_chunk) every token's. Errors: token id out of range, or the
  // sequence would pass n_ctx (unless kv_pos_shift); nothing is fed then.
  Status Eval(std::span<const int32_t> tokens, LogitsFor which = LogitsFor::kLastToken);

  // [1 or n_tokens][n_vocab] from the last Eval.
  std::span<const float> logits() const;
  // The last token's logits from the last Eval.
  std::span<const float> last_logits() const;

  int32_t n_past() const { return n_past_; }
  int32_t n_ctx() const { return n_ctx_; }
  int32_t max_chunk() const { return max_chunk_; }
  const Model& model() const { return model_; }
  const KvCache& cache() const { return *cache_; }
  const KvPlan& kv_plan() const { return kv_plan_; }

  // Forgets the sequence; buffers stay allocated.
  void Reset();

  // Later Evals report every query head's attention probabilities to
  // `observer` (model/attention_observer.h; null, the default: none). It
  // must outlive those Evals and may be called from the pool threads.
  void set_attention_observer(AttentionObserver* observer) {
    forward_.set_attention_observer(observer);
  }

  // Save copies the sequence state into `snapshot` (allocating its cache
  // when it is empty or holds another session's state); Restore puts it
  // back, after which every Eval gives the same logits and evictions as
  // right after the Save. Scoring several continuations of one prefix then
  // runs the prefix once. Restore requires a snapshot this session saved
  // (checked). logits() are not saved.
  void Save(SessionSnapshot& snapshot) const;
  void Restore(const SessionSnapshot& snapshot);
  // Distinct for every Session a process creates (never reused).
  uint64_t id() const { return id_; }

 private:
  Session(const Model& model, const SessionOptions& options, std::unique_ptr<KvCache> cache);

  const Model& model_;
  uint64_t id_;
  int32_t n_ctx_;
  int32_t max_chunk_;
  bool unbounded_positions_;  // pos-shift: n_ctx does not limit the sequence
  KvPlan kv_plan_;
  int32_t n_past_ = 0;
  kernels::ThreadPool pool_;
  std::unique_ptr<KvCache> cache_;
  ForwardPass forward_;
};

}  // namespace h2o
