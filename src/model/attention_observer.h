// AttentionObserver: a read-only tap on the attention probabilities of the
// forward pass, for analysis (h2o analyze: sparsity, heavy-hitter power
// law). The forward pass calls it after the softmax of every query head;
// with no observer set it costs one null check per query row of a KV head.
#pragma once

#include <cstdint>
#include <span>

namespace h2o {

class AttentionObserver {
 public:
  virtual ~AttentionObserver() = default;

  // One query row of one query head: `probs[s]` is the attention of query
  // position `query_pos` (layer `layer`, query head `head` in [0, n_head))
  // on the token cached in slot s, whose position is `key_positions[s]`.
  // Both spans cover the KV head's slots (KV head = head / n_group), so
  // they include empty slots (position < 0) and, within a chunk, tokens
  // after query_pos: those entries are masked and their probability is 0.
  // The other probabilities sum to 1. The spans are valid only during the
  // call.
  //
  // Threading: calls for the KV heads of one layer may run concurrently on
  // the session's thread pool (never two calls for the same KV head at
  // once), so an implementation must make calls for different heads safe,
  // e.g. with per-head storage. For one head, calls come in order of
  // layer, then query position; the query heads of a group interleave.
  virtual void OnAttention(int32_t layer, int32_t head, int32_t query_pos,
                           std::span<const int32_t> key_positions,
                           std::span<const float> probs) = 0;
};

}  // namespace h2o
