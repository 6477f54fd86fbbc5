// The forward pass of a decoder-only model over a chunk of tokens, one code
// path for every architecture (model/arch.h says which steps it has), with
// the KV cache applying its eviction policy after each layer's attention
// (DESIGN.md section 3). All activations are preallocated for the largest
// chunk, so a forward allocates nothing.
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

class ForwardPass {
 public:
  // Buffers for chunks of up to max_chunk tokens attending to up to
  // kv_capacity slots per head, run on up to n_threads threads, for a
  // sequence of up to n_ctx positions (which picks Phi-3's rotary factors).
  // `model` must outlive this object.
  // pos_shift: keys are cached unrotated and rotated at attention time by
  // their rank in the cache (StreamingLLM), queries by their own rank, so
  // rotary positions stay below the cache capacity however long the
  // sequence; otherwise every token keeps its absolute position. Requires
  // rotary positions.
  ForwardPass(const Model& model, int32_t max_chunk, int32_t kv_capacity, int32_t n_ctx,
              bool pos_shift, int n_threads);

  // Runs tokens (1..max_chunk of them, at positions pos0, pos0+1, ...)
  // through the model, appending their K/V to `cache` and evicting over
  // budget after each layer's attention. Fills logits() for the last token
  // or for every token. Requires valid token ids (checked by the caller)
  // and, with learned positions, positions below n_ctx_train.
  void Run(std::span<const int32_t> tokens, int32_t pos0, KvCache& cache, LogitsFor which,
           kernels::ThreadPool* pool);

  // [n_tokens or 1][n_vocab] from the last Run.
  std::span<const float> logits() const { return {logits_.data(), logits_size_}; }

  // Later Runs report every query head's attention probabilities to
  // `observer` (null: none, the default). It must outlive those Runs.
  void set_attention_observer(AttentionObserver* observer) { observer_ = observer; }

 private:
  // y[n][w.rows] = w x[n][w.cols] (+ bias) for the n chunk tokens.
  void MatMul(const WeightMatrix& w, const std::vector<float>& bias, const float* x, int32_t n,
              float* y, kernels::ThreadPool* pool);
  // out[t] = norm(x[t]) for the n chunk tokens of n_embd values.
  void Norm(const NormWeights& w, const float* x, float* out, int32_t n) const;
  void Embed(std::span<const int32_t> tokens, int32_t pos0);
  // Q, K, V of the chunk (biases, per-head norms and RoPE applied).
  void ProjectQkv(const LayerWeights& lw, int32_t layer, int32_t n, int32_t pos0, int32_t rank0,
                  kernels::ThreadPool* pool);
  // The FFN of the normed input xb_ into ffn_out_.
  void FeedForward(const LayerWeights& lw, int32_t n, kernels::ThreadPool* pool);
  // Attention of every chunk token over KV head g of `layer` (one thread).
  void AttendHead(KvCache& cache, int32_t layer, int32_t g, int32_t n, int32_t pos0);
  // Fills head g's rotated-key buffer with its keys rotated to their rank
  // among present tokens and returns a view that reads them.
  KvHeadView RotateKeysByRank(const KvHeadView& kv, int32_t layer, int32_t g);

  const Model& model_;
  const ArchSpec& spec_;
  int32_t max_chunk_;
  int32_t kv_capacity_;
  bool pos_shift_;
  std::vector<const RotaryEmbedding*> ropes_;  // per layer; empty: learned positions
  size_t logits_size_ = 0;
  AttentionObserver* observer_ = nullptr;

  std::vector<float> x_;         // [max_chunk][n_embd] residual stream
  std::vector<float> xb_;        // [max_chunk][n_embd] normed input of a block
  std::vector<float> q_;         // [max_chunk][q_dim]
  std::vector<float> k_;         // [max_chunk][kv_dim]
  std::vector<float> v_;         // [max_chunk][kv_dim]
  std::vector<float> qkv_;       // [max_chunk][q_dim + 2 kv_dim] fused projection
  std::vector<float> attn_out_;  // [max_chunk][q_dim]
  std::vector<float> proj_;      // [max_chunk][n_embd] attention output
  std::vector<float> ffn_out_;   // [max_chunk][n_embd]
  std::vector<float> gate_;      // [max_chunk][n_ff]
  std::vector<float> up_;        // [max_chunk][n_ff] (fused gate/up: [2 n_ff])
  std::vector<float> logits_;    // [max_chunk][n_vocab]
  std::vector<float> matmul_scratch_;
  // Per KV head, so heads run in parallel:
  std::vector<float> probs_;         // [n_head_kv][n_group][kv_capacity]
  std::vector<float> rotated_k_;     // [n_head_kv][kv_capacity][head_dim] (pos_shift)
  std::vector<int32_t> slot_order_;  // [n_head_kv][kv_capacity] (pos_shift)
};

}  // namespace h2o
