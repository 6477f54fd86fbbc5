#include "model/forward.h"

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace h2o {

ForwardPass::ForwardPass(const Model& model, int32_t max_chunk, int32_t kv_capacity, bool pos_shift,
                         int n_threads)
    : model_(model), max_chunk_(max_chunk), kv_capacity_(kv_capacity), pos_shift_(pos_shift) {
  const HParams& hp = model.hparams();
  const size_t n = static_cast<size_t>(max_chunk);
  const size_t q_dim = static_cast<size_t>(hp.q_dim());
  x_.resize(n * hp.n_embd);
  xb_.resize(n * hp.n_embd);
  q_.resize(n * q_dim);
  k_.resize(n * hp.kv_dim());
  v_.resize(n * hp.kv_dim());
  attn_out_.resize(n * q_dim);
  proj_.resize(n * hp.n_embd);
  gate_.resize(n * hp.n_ff);
  up_.resize(n * hp.n_ff);
  logits_.resize(n * hp.n_vocab);
  matmul_scratch_.resize(static_cast<size_t>(kernels::MatMulScratchFloats(
      std::max<int64_t>({hp.n_embd, hp.n_ff, static_cast<int64_t>(q_dim)}), max_chunk, n_threads)));
  probs_.resize(static_cast<size_t>(hp.n_head) * kv_capacity);
  if (pos_shift_) {
    rotated_k_.resize(static_cast<size_t>(hp.n_head_kv) * kv_capacity * hp.head_dim);
    slot_order_.resize(static_cast<size_t>(hp.n_head_kv) * kv_capacity);
  }
}

void ForwardPass::MatMul(const WeightMatrix& w, const float* x, int32_t n, float* y,
                         kernels::ThreadPool* pool) {
  kernels::MatMul(w.type, w.data, w.rows, w.cols, x, n, y, matmul_scratch_.data(), pool);
}

KvHeadView ForwardPass::RotateKeysByRank(const KvHeadView& kv, int32_t g) {
  int32_t* order = &slot_order_[static_cast<size_t>(g) * kv_capacity_];
  float* rotated = &rotated_k_[static_cast<size_t>(g) * kv_capacity_ * kv.head_dim];
  int32_t n_present = 0;
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    if (kv.pos[s] >= 0) order[n_present++] = s;
  }
  std::sort(order, order + n_present, [&](int32_t a, int32_t b) { return kv.pos[a] < kv.pos[b]; });
  for (int32_t rank = 0; rank < n_present; ++rank) {
    const int32_t s = order[rank];
    float* row = rotated + static_cast<size_t>(s) * kv.head_dim;
    kernels::DequantizeRow(kv.k_type, kv.KRow(s), row, kv.head_dim);
    kernels::RopeInPlace(row, 1, kv.head_dim, rank, model_.rope().params());
  }
  KvHeadView view = kv;
  view.k = rotated;
  view.k_spill = rotated + static_cast<size_t>(kv.n_home) * kv.head_dim;
  view.k_type = TensorType::kF32;
  return view;
}

void ForwardPass::AttendHead(KvCache& cache, int32_t l, int32_t g, int32_t n, int32_t pos0) {
  const HParams& hp = model_.hparams();
  const int32_t hd = hp.head_dim;
  const int32_t n_group = hp.n_group();
  const size_t q_dim = static_cast<size_t>(hp.n_head) * hd;
  const KvHeadView view = pos_shift_ ? RotateKeysByRank(cache.View(l, g), g) : cache.View(l, g);
  float* step = cache.step_attention(l, g);
  // TOVA ranks by the newest query's attention alone.
  if (step != nullptr) std::fill(step, step + view.n_slots, 0.0f);
  kernels::GroupAttentionOutputs outputs;
  outputs.probs = &probs_[static_cast<size_t>(g) * n_group * kv_capacity_];
  outputs.score_accum = cache.scores(l, g);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  for (int32_t t = 0; t < n; ++t) {
    const size_t first_head = static_cast<size_t>(g) * n_group * hd;
    outputs.out = &attn_out_[t * q_dim + first_head];
    outputs.step_attention = t == n - 1 ? step : nullptr;
    kernels::AttendGroup(&q_[t * q_dim + first_head], n_group, view, pos0 + t, /*window=*/0, scale,
                         outputs);
    if (observer_ != nullptr) {
      const size_t n_slots = static_cast<size_t>(view.n_slots);
      for (int32_t j = 0; j < n_group; ++j) {
        observer_->OnAttention(l, g * n_group + j, pos0 + t, {view.pos, n_slots},
                               {outputs.probs + j * n_slots, n_slots});
      }
    }
  }
}

void ForwardPass::Run(std::span<const int32_t> tokens, int32_t pos0, KvCache& cache,
                      LogitsFor which, kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  const int32_t n = static_cast<int32_t>(tokens.size());
  H2O_CHECK(n >= 1 && n <= max_chunk_);
  const int32_t n_embd = hp.n_embd;
  const int32_t hd = hp.head_dim;
  const int32_t q_dim = hp.n_head * hd;
  const int32_t kv_dim = hp.kv_dim();
  const kernels::RopeParams rope = model_.rope().params();

  for (int32_t t = 0; t < n; ++t) {
    const auto* row = static_cast<const uint8_t*>(w.token_embd.data) +
                      static_cast<size_t>(tokens[t]) * w.token_embd.row_bytes();
    kernels::DequantizeRow(w.token_embd.type, row, &x_[t * n_embd], n_embd);
  }

  for (int32_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& lw = w.layers[l];
    // Every KV head holds the same number of tokens, so a query's rank in
    // the cache is the same for all heads.
    const int32_t rank0 = pos_shift_ ? cache.count(l, 0) : 0;
    for (int32_t t = 0; t < n; ++t) {
      kernels::RmsNorm(&x_[t * n_embd], lw.attn_norm.data(), &xb_[t * n_embd], n_embd, hp.rms_eps);
    }
    MatMul(lw.wq, xb_.data(), n, q_.data(), pool);
    MatMul(lw.wk, xb_.data(), n, k_.data(), pool);
    MatMul(lw.wv, xb_.data(), n, v_.data(), pool);
    // Queries at their absolute position (pos-shift: at their rank); keys
    // likewise, or, with pos-shift, later at attention time.
    for (int32_t t = 0; t < n; ++t) {
      kernels::RopeInPlace(&q_[t * q_dim], hp.n_head, hd, pos_shift_ ? rank0 + t : pos0 + t, rope);
      if (!pos_shift_) kernels::RopeInPlace(&k_[t * kv_dim], hp.n_head_kv, hd, pos0 + t, rope);
    }
    // The whole chunk enters the cache first; causality comes from positions.
    for (int32_t g = 0; g < hp.n_head_kv; ++g) {
      for (int32_t t = 0; t < n; ++t) {
        cache.Append(l, g, pos0 + t, &k_[t * kv_dim + g * hd], &v_[t * kv_dim + g * hd]);
      }
    }
    // KV heads are independent (own slots, own scores): one per thread.
    const int64_t attention_work = static_cast<int64_t>(n) * cache.View(l, 0).n_slots * q_dim;
    if (pool != nullptr && pool->size() > 1 && attention_work >= (1 << 16)) {
      pool->ParallelFor(hp.n_head_kv, [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g)
          AttendHead(cache, l, static_cast<int32_t>(g), n, pos0);
      });
    } else {
      for (int32_t g = 0; g < hp.n_head_kv; ++g) AttendHead(cache, l, g, n, pos0);
    }
    cache.EvictOverBudget(l);

    MatMul(lw.wo, attn_out_.data(), n, proj_.data(), pool);
    for (size_t i = 0; i < static_cast<size_t>(n) * n_embd; ++i) x_[i] += proj_[i];
    for (int32_t t = 0; t < n; ++t) {
      kernels::RmsNorm(&x_[t * n_embd], lw.ffn_norm.data(), &xb_[t * n_embd], n_embd, hp.rms_eps);
    }
    MatMul(lw.w_gate, xb_.data(), n, gate_.data(), pool);
    MatMul(lw.w_up, xb_.data(), n, up_.data(), pool);
    kernels::SwiGluInPlace(gate_.data(), up_.data(), static_cast<int64_t>(n) * hp.n_ff);
    MatMul(lw.w_down, gate_.data(), n, proj_.data(), pool);
    for (size_t i = 0; i < static_cast<size_t>(n) * n_embd; ++i) x_[i] += proj_[i];
  }

  const int32_t first = which == LogitsFor::kAllTokens ? 0 : n - 1;
  for (int32_t t = first; t < n; ++t) {
    kernels::RmsNorm(&x_[t * n_embd], w.output_norm.data(), &xb_[t * n_embd], n_embd, hp.rms_eps);
  }
  MatMul(w.output, &xb_[static_cast<size_t>(first) * n_embd], n - first, logits_.data(), pool);
  logits_size_ = static_cast<size_t>(n - first) * hp.n_vocab;
}

}  // namespace h2o
