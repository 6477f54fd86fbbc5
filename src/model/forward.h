// The forward pass of a decoder-only model over a batch: token chunks of one
// or more sequences, each with its own KV cache, positions and rotary
// embedding. One code path for every architecture (model/arch.h says which
// steps it has). Every weight matrix is read once for all rows of the
// batch; attention runs per (sequence, KV head) in parallel; each cache
// applies its own eviction policy after each layer's attention (DESIGN.md
// section 3). Activations are preallocated for the largest batch, so a
// forward allocates nothing (logit rows beyond the largest request seen
// grow a buffer once).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "kernels/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/attention_observer.h"
#include "model/model.h"

namespace h2o {

enum class LogitsFor { kLastToken, kAllTokens };

// One sequence's part of a batch.
struct ForwardItem {
  KvCache* cache = nullptr;
  std::span<const int32_t> tokens;  // valid ids, at positions pos0, pos0 + 1, ...
  int32_t pos0 = 0;
  // The sequence's rotary embedding per layer (Model::LayerRopes of its
  // context); empty for learned positions.
  std::span<const RotaryEmbedding* const> ropes;
  // Keys cached unrotated and rotated at attention time by their rank in
  // the cache (StreamingLLM), queries by their own rank, so rotary
  // positions stay below the cache capacity however long the sequence.
  bool pos_shift = false;
  LogitsFor which = LogitsFor::kLastToken;
  // [1 or tokens.size()][n_vocab] receives the logits (nullptr: none).
  float* logits = nullptr;
  // [n_embd]: the final hidden state of every row, after the output norm
  // (what the logits are made from), is added to it (nullptr: none); the
  // sum over a text's chunks, divided by its length, is its mean-pooled
  // embedding, as llama-server's.
  float* hidden_sum = nullptr;
  // Told every query head's attention probabilities (nullptr: none).
  AttentionObserver* observer = nullptr;
};

class ForwardPass {
 public:
  // Buffers for batches of up to max_rows tokens in all, on up to
  // n_threads threads. `model` must outlive this object.
  ForwardPass(const Model& model, int32_t max_rows, int n_threads);

  // Grows the attention scratch for caches of up to kv_capacity slots per
  // head (allocates; call when a sequence is created, not per step).
  void ReserveKvCapacity(int32_t kv_capacity);

  // Runs the items (1..max_rows tokens in all, caches distinct, capacities
  // reserved, learned positions below n_ctx_train; checked by the caller)
  // through the model, appending their K/V to their caches, evicting over
  // budget after each layer's attention, and writing each item's logits.
  void Run(std::span<const ForwardItem> items, kernels::ThreadPool* pool);

  int32_t max_rows() const { return max_rows_; }

 private:
  // y[n][w.rows] = w x[n][w.cols] (+ bias) for the n batch rows.
  void MatMul(const WeightMatrix& w, const std::vector<float>& bias, const float* x, int32_t n,
              float* y, kernels::ThreadPool* pool);
  // One product of a layer's input: y[t * y_stride + r] = (w x[t])[r] + bias.
  struct Projection {
    WeightMatrix w;
    const float* bias;  // null: none
    float* y;
    int64_t y_stride;
  };
  // The projections of one input x (n rows); those of one type and layout
  // share a quantization of x and one pass of the pool. `after` runs on
  // each chunk of rows once its products are done (see
  // kernels::MatMulShared; all projections then have the same rows).
  void Project(std::span<const Projection> projections, const float* x, int32_t n,
               kernels::ThreadPool* pool, const kernels::RangeFn* after = nullptr);
  // out[r] = norm(x[r]) for n rows of n_embd values.
  void Norm(const NormWeights& w, const float* x, float* out, int32_t n) const;
  void Embed(std::span<const ForwardItem> items);
  // Q, K, V of every row (biases, per-head norms and RoPE applied).
  void ProjectQkv(const LayerWeights& lw, int32_t layer, std::span<const ForwardItem> items,
                  int32_t n, kernels::ThreadPool* pool);
  // The FFN of the normed input xb_ into ffn_out_.
  void FeedForward(const LayerWeights& lw, int32_t n, kernels::ThreadPool* pool);
  void Attend(int32_t layer, std::span<const ForwardItem> items, kernels::ThreadPool* pool);
  // Attention of an item's rows (starting at batch row `row0`) over KV head
  // g of `layer`, with scratch `part`'s buffers (the running thread's).
  void AttendHead(const ForwardItem& item, int32_t row0, int32_t layer, int32_t g, int32_t part);
  // Fills scratch `part`'s rotated-key buffer with the head's keys rotated
  // to their rank among present tokens and returns a view that reads them.
  KvHeadView RotateKeysByRank(const KvHeadView& kv, const kernels::RopeParams& rope, int32_t part);
  void Logits(std::span<const ForwardItem> items, kernels::ThreadPool* pool);
  void SumHidden(std::span<const ForwardItem> items);

  const Model& model_;
  const ArchSpec& spec_;
  int32_t max_rows_;
  int n_parts_;                     // attention scratch sets: one per thread
  int32_t kv_capacity_ = 0;         // slots the attention scratch covers
  std::vector<int32_t> row_pos_;    // [max_rows] position of each row
  std::vector<uint8_t> embd_row_;   // a token's embedding row, out of its panels
  std::vector<int32_t> row_item_;   // [max_rows] index of each row's item
  std::vector<int32_t> item_row0_;  // [max_rows] first row of each item
  std::vector<int32_t> query_pos_;  // [max_rows] position RoPE gives each row's query

  std::vector<float> x_;         // [max_rows][n_embd] residual stream
  std::vector<float> xb_;        // [max_rows][n_embd] normed input of a block
  std::vector<float> q_;         // [max_rows][q_dim]
  std::vector<float> k_;         // [max_rows][kv_dim]
  std::vector<float> v_;         // [max_rows][kv_dim]
  std::vector<float> qkv_;       // [max_rows][q_dim + 2 kv_dim] fused projection
  std::vector<float> attn_out_;  // [max_rows][q_dim]
  std::vector<float> proj_;      // [max_rows][n_embd] attention output
  std::vector<float> ffn_out_;   // [max_rows][n_embd]
  std::vector<float> gate_;      // [max_rows][n_ff]
  std::vector<float> up_;        // [max_rows][n_ff]
  std::vector<float> logits_;    // [rows asked for][n_vocab], grown on demand
  std::vector<float> matmul_scratch_;
  // Per scratch set (thread), so (sequence, KV head) pairs run in parallel:
  std::vector<float> probs_;          // [n_parts][n_group][kv_capacity]
  std::vector<float> chunk_scratch_;  // [n_parts][chunk_scratch_floats_] prefill tiles
  size_t chunk_scratch_floats_ = 0;
  std::vector<float> rotated_k_;     // [n_parts][kv_capacity][head_dim] (pos_shift)
  std::vector<int32_t> slot_order_;  // [n_parts][kv_capacity] (pos_shift)
};

}  // namespace h2o
