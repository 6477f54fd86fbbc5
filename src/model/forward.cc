#include "model/forward.h"

#include <algorithm>
#include <cmath>

#include "kernels/matvec.h"
#include "kernels/ops.h"
#include "kernels/quant.h"
#include "model/attention.h"

namespace h2o {
namespace {

void MatVec(const WeightMatrix& w, const float* x, float* y, kernels::ThreadPool* pool) {
  kernels::MatVec(w.type, w.data, w.rows, w.cols, x, y, pool);
}

}  // namespace

ForwardPass::ForwardPass(const Model& model, int32_t max_chunk, int32_t kv_capacity,
                         bool pos_shift)
    : model_(model), max_chunk_(max_chunk), pos_shift_(pos_shift) {
  const HParams& hp = model.hparams();
  const size_t n = static_cast<size_t>(max_chunk);
  x_.resize(n * hp.n_embd);
  xb_.resize(n * hp.n_embd);
  q_.resize(n * hp.n_head * hp.head_dim);
  k_.resize(n * hp.kv_dim());
  v_.resize(n * hp.kv_dim());
  attn_out_.resize(n * hp.n_head * hp.head_dim);
  proj_.resize(hp.n_embd);
  gate_.resize(hp.n_ff);
  up_.resize(hp.n_ff);
  probs_.resize(kv_capacity);
  logits_.resize(n * hp.n_vocab);
  if (pos_shift_) {
    rotated_k_.resize(static_cast<size_t>(kv_capacity) * hp.head_dim);
    slot_order_.resize(kv_capacity);
  }
}

KvHeadView ForwardPass::RotateKeysByRank(const KvHeadView& kv) {
  const HParams& hp = model_.hparams();
  int32_t n_present = 0;
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    if (kv.pos[s] >= 0) slot_order_[n_present++] = s;
  }
  std::sort(slot_order_.begin(), slot_order_.begin() + n_present,
            [&](int32_t a, int32_t b) { return kv.pos[a] < kv.pos[b]; });
  const size_t row_bytes = RowBytes(kv.k_type, kv.head_dim);
  for (int32_t rank = 0; rank < n_present; ++rank) {
    const int32_t s = slot_order_[rank];
    float* row = &rotated_k_[static_cast<size_t>(s) * kv.head_dim];
    kernels::DequantizeRow(kv.k_type, static_cast<const uint8_t*>(kv.k) + s * row_bytes, row,
                           kv.head_dim);
    kernels::RopeInPlace(row, 1, kv.head_dim, rank, hp.rope_freq_base, hp.rope_freq_scale,
                         hp.rope_mode);
  }
  KvHeadView rotated = kv;
  rotated.k = rotated_k_.data();
  rotated.k_type = TensorType::kF32;
  return rotated;
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
  const float attn_scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const bool track_scores = cache.policy().needs_scores();
  const bool track_step = cache.policy().needs_step_attention();

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
    // Q, K, V of every chunk token, rotated at its absolute position (or,
    // with pos_shift, queries at their rank and keys later).
    for (int32_t t = 0; t < n; ++t) {
      float* xb = &xb_[t * n_embd];
      kernels::RmsNorm(&x_[t * n_embd], lw.attn_norm.data(), xb, n_embd, hp.rms_eps);
      MatVec(lw.wq, xb, &q_[t * q_dim], pool);
      MatVec(lw.wk, xb, &k_[t * kv_dim], pool);
      MatVec(lw.wv, xb, &v_[t * kv_dim], pool);
      kernels::RopeInPlace(&q_[t * q_dim], hp.n_head, hd, pos_shift_ ? rank0 + t : pos0 + t,
                           hp.rope_freq_base, hp.rope_freq_scale, hp.rope_mode);
      if (!pos_shift_) {
        kernels::RopeInPlace(&k_[t * kv_dim], hp.n_head_kv, hd, pos0 + t, hp.rope_freq_base,
                             hp.rope_freq_scale, hp.rope_mode);
      }
    }
    // The whole chunk enters the cache first; causality comes from positions.
    for (int32_t g = 0; g < hp.n_head_kv; ++g) {
      for (int32_t t = 0; t < n; ++t) {
        cache.Append(l, g, pos0 + t, &k_[t * kv_dim + g * hd], &v_[t * kv_dim + g * hd]);
      }
    }
    for (int32_t g = 0; g < hp.n_head_kv; ++g) {
      const KvHeadView kv =
          pos_shift_ ? RotateKeysByRank(cache.View(l, g)) : cache.View(l, g);
      AttentionOutputs outputs;
      outputs.probs = probs_.data();
      outputs.score_accum = track_scores ? cache.scores(l, g) : nullptr;
      if (track_step) {
        // TOVA ranks by the newest query's attention alone.
        float* step = cache.step_attention(l, g);
        std::fill(step, step + kv.n_slots, 0.0f);
      }
      for (int32_t t = 0; t < n; ++t) {
        outputs.step_attention =
            track_step && t == n - 1 ? cache.step_attention(l, g) : nullptr;
        for (int32_t h = g * hp.n_group(); h < (g + 1) * hp.n_group(); ++h) {
          outputs.out = &attn_out_[t * q_dim + h * hd];
          AttendQuery(&q_[t * q_dim + h * hd], kv, pos0 + t, attn_scale, outputs);
        }
      }
    }
    cache.EvictOverBudget(l);

    for (int32_t t = 0; t < n; ++t) {
      float* x = &x_[t * n_embd];
      MatVec(lw.wo, &attn_out_[t * q_dim], proj_.data(), pool);
      for (int32_t i = 0; i < n_embd; ++i) x[i] += proj_[i];
      float* xb = &xb_[t * n_embd];
      kernels::RmsNorm(x, lw.ffn_norm.data(), xb, n_embd, hp.rms_eps);
      MatVec(lw.w_gate, xb, gate_.data(), pool);
      MatVec(lw.w_up, xb, up_.data(), pool);
      kernels::SwiGluInPlace(gate_.data(), up_.data(), hp.n_ff);
      MatVec(lw.w_down, gate_.data(), proj_.data(), pool);
      for (int32_t i = 0; i < n_embd; ++i) x[i] += proj_[i];
    }
  }

  const int32_t first = which == LogitsFor::kAllTokens ? 0 : n - 1;
  for (int32_t t = first; t < n; ++t) {
    float* xb = &xb_[t * n_embd];
    kernels::RmsNorm(&x_[t * n_embd], w.output_norm.data(), xb, n_embd, hp.rms_eps);
    MatVec(w.output, xb, &logits_[static_cast<size_t>(t - first) * hp.n_vocab], pool);
  }
  logits_size_ = static_cast<size_t>(n - first) * hp.n_vocab;
}

}  // namespace h2o
