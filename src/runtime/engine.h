// Engine: runs many sequences through one model in one forward pass. It owns
// the thread pool and the activations (ForwardPass); each Sequence owns its
// KV cache, position and logits. Forward(batch) reads every weight once for
// all rows of all sequences, runs attention per (sequence, KV head) in
// parallel, evicts each cache by its own policy, and computes logits only
// for the rows asked for (DESIGN.md section 9). A batch of sequences gives
// the same tokens as each sequence run alone (the kernels' row results do
// not depend on the other rows of a batch).
//
// One thread drives an engine (its sequences included); the pool's threads
// work inside Forward only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/status.h"
#include "kernels/thread_pool.h"
#include "model/forward.h"
#include "model/model.h"
#include "runtime/sequence.h"

namespace h2o {

struct EngineOptions {
  int32_t n_threads = 1;
  // Most tokens one forward pass takes, all sequences together: the size of
  // the activation buffers, and the most tokens of a sequence's chunk.
  int32_t max_batch_tokens = 512;
};

// One sequence's part of a batch: tokens at its next positions.
struct BatchItem {
  Sequence* sequence = nullptr;
  std::span<const int32_t> tokens;
  LogitsFor which = LogitsFor::kLastToken;
  bool want_logits = true;  // false: no logits for this item (prefill)
  float* hidden_sum = nullptr;  // ForwardItem::hidden_sum
};

class Engine {
 public:
  // Errors: bad option values (one line).
  static Result<std::unique_ptr<Engine>> Create(const Model& model, const EngineOptions& options);

  // A new sequence; its chunk is capped at max_batch_tokens. Allocates (its
  // cache, and the engine's attention scratch if the cache is the largest
  // yet). Errors: bad options, one line naming the option.
  Result<std::unique_ptr<Sequence>> NewSequence(const SequenceOptions& options);
  // What NewSequence(options) would allocate for its KV cache
  // (Sequence::KvBytes, with this engine's chunk cap).
  Result<size_t> SequenceKvBytes(const SequenceOptions& options) const {
    return Sequence::KvBytes(model_, options, forward_.max_rows());
  }

  // Runs one batch: each item's tokens at its sequence's next positions.
  // Checked before anything runs (nothing is fed on error): items name
  // distinct sequences created by this engine's model, each with 1..its
  // max_chunk tokens of valid ids and room in its context, all items
  // together at most max_batch_tokens. Afterwards each item that wanted
  // logits has them in its sequence (last token, or every token with
  // kAllTokens), and every sequence advanced by its tokens.
  Status Forward(std::span<const BatchItem> batch);

  // Feeds tokens to one sequence in chunks of its max_chunk, evicting over
  // budget after each chunk; afterwards the sequence holds the last token's
  // logits, or with kAllTokens (requires tokens.size() <= max_chunk) every
  // token's. Errors as Forward.
  Status Eval(Sequence& sequence, std::span<const int32_t> tokens,
              LogitsFor which = LogitsFor::kLastToken);

  // Feeds tokens to a fresh sequence (a full cache that holds them all) and
  // returns their mean-pooled final hidden state, L2-normalized: the
  // embedding llama-server's /v1/embeddings gives (pooling mean). Errors as
  // Eval, and a sequence that is not fresh or evicts.
  Result<std::vector<float>> Embed(Sequence& sequence, std::span<const int32_t> tokens);

  // Runs fn over [0, n) on the engine's threads (ThreadPool::ParallelFor),
  // for per-sequence work between forward passes, such as sampling each
  // sequence's next token. From the driving thread only, not inside fn.
  void ParallelFor(int64_t n, kernels::RangeFn fn) { pool_.ParallelFor(n, fn); }

  const Model& model() const { return model_; }
  int32_t max_batch_tokens() const { return forward_.max_rows(); }
  int n_threads() const { return pool_.size(); }

 private:
  Engine(const Model& model, const EngineOptions& options);
  Status Check(std::span<const BatchItem> batch) const;

  const Model& model_;
  kernels::ThreadPool pool_;
  ForwardPass forward_;
  std::vector<ForwardItem> items_;  // reused: no allocation per step
};

}  // namespace h2o
