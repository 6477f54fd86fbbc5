#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace h2o {

ForwardPass::ForwardPass(const Model& model, int32_t max_chunk, int32_t kv_capacity, int32_t n_ctx,
                         bool pos_shift, int n_threads)
    : model_(model),
      spec_(*model.hparams().spec),
      max_chunk_(max_chunk),
      kv_capacity_(kv_capacity),
      pos_shift_(pos_shift),
      ropes_(model.LayerRopes(n_ctx)) {
  H2O_CHECK(!pos_shift || spec_.rotary());
  const HParams& hp = model.hparams();
  const size_t n = static_cast<size_t>(max_chunk);
  const size_t q_dim = static_cast<size_t>(hp.q_dim());
  const size_t kv_dim = static_cast<size_t>(hp.kv_dim());
  x_.resize(n * hp.n_embd);
  xb_.resize(n * hp.n_embd);
  q_.resize(n * q_dim);
  k_.resize(n * kv_dim);
  v_.resize(n * kv_dim);
  if (spec_.fused_qkv) qkv_.resize(n * (q_dim + 2 * kv_dim));
  attn_out_.resize(n * q_dim);
  proj_.resize(n * hp.n_embd);
  ffn_out_.resize(n * hp.n_embd);
  gate_.resize(n * hp.n_ff);
  up_.resize(n * hp.n_ff * (spec_.fused_gate_up ? 2 : 1));
  logits_.resize(n * hp.n_vocab);
  const int64_t widest_input = std::max<int64_t>({hp.n_embd, hp.n_ff, static_cast<int64_t>(q_dim)});
  matmul_scratch_.resize(
      static_cast<size_t>(kernels::MatMulScratchFloats(widest_input, max_chunk, n_threads)));
  probs_.resize(static_cast<size_t>(hp.n_head) * kv_capacity);
  if (pos_shift_) {
    rotated_k_.resize(static_cast<size_t>(hp.n_head_kv) * kv_capacity * hp.head_dim);
    slot_order_.resize(static_cast<size_t>(hp.n_head_kv) * kv_capacity);
  }
}

void ForwardPass::MatMul(const WeightMatrix& w, const std::vector<float>& bias, const float* x,
                         int32_t n, float* y, kernels::ThreadPool* pool) {
  kernels::MatMul(w.type, w.data, w.rows, w.cols, x, n, y, matmul_scratch_.data(), pool);
  if (bias.empty()) return;
  for (int32_t t = 0; t < n; ++t) {
    float* row = y + static_cast<size_t>(t) * w.rows;
    for (int64_t r = 0; r < w.rows; ++r) row[r] += bias[r];
  }
}

void ForwardPass::Norm(const NormWeights& w, const float* x, float* out, int32_t n) const {
  const HParams& hp = model_.hparams();
  const int64_t d = hp.n_embd;
  for (int32_t t = 0; t < n; ++t) {
    if (spec_.norm == NormKind::kRms) {
      kernels::RmsNorm(x + t * d, w.weight.data(), out + t * d, d, hp.norm_eps);
    } else {
      kernels::LayerNorm(x + t * d, w.weight.data(), w.bias.empty() ? nullptr : w.bias.data(),
                         out + t * d, d, hp.norm_eps);
    }
  }
}

void ForwardPass::Embed(std::span<const int32_t> tokens, int32_t pos0) {
  const HParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  const int32_t n_embd = hp.n_embd;
  for (size_t t = 0; t < tokens.size(); ++t) {
    float* x = &x_[t * n_embd];
    const auto* row = static_cast<const uint8_t*>(w.token_embd.data) +
                      static_cast<size_t>(tokens[t]) * w.token_embd.row_bytes();
    kernels::DequantizeRow(w.token_embd.type, row, x, n_embd);
    if (w.position_embd.data != nullptr) {
      const int32_t pos = pos0 + static_cast<int32_t>(t);
      H2O_CHECK(pos < w.position_embd.rows);
      float* p = &xb_[t * n_embd];  // free until the first norm
      kernels::DequantizeRow(w.position_embd.type,
                             static_cast<const uint8_t*>(w.position_embd.data) +
                                 static_cast<size_t>(pos) * w.position_embd.row_bytes(),
                             p, n_embd);
      for (int32_t i = 0; i < n_embd; ++i) x[i] += p[i];
    }
    if (hp.embed_scale != 1.0f) {
      for (int32_t i = 0; i < n_embd; ++i) x[i] *= hp.embed_scale;
    }
  }
}

void ForwardPass::ProjectQkv(const LayerWeights& lw, int32_t layer, int32_t n, int32_t pos0,
                             int32_t rank0, kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const int32_t hd = hp.head_dim;
  const size_t q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
  if (spec_.fused_qkv) {
    MatMul(lw.wqkv, {}, xb_.data(), n, qkv_.data(), pool);
    const size_t stride = q_dim + 2 * kv_dim;
    for (int32_t t = 0; t < n; ++t) {
      const float* row = &qkv_[t * stride];
      std::memcpy(&q_[t * q_dim], row, q_dim * sizeof(float));
      std::memcpy(&k_[t * kv_dim], row + q_dim, kv_dim * sizeof(float));
      std::memcpy(&v_[t * kv_dim], row + q_dim + kv_dim, kv_dim * sizeof(float));
    }
    auto add_bias = [n](const std::vector<float>& bias, float* y, size_t dim) {
      if (bias.empty()) return;
      for (int32_t t = 0; t < n; ++t) {
        for (size_t i = 0; i < dim; ++i) y[t * dim + i] += bias[i];
      }
    };
    add_bias(lw.bq, q_.data(), q_dim);
    add_bias(lw.bk, k_.data(), kv_dim);
    add_bias(lw.bv, v_.data(), kv_dim);
  } else {
    MatMul(lw.wq, lw.bq, xb_.data(), n, q_.data(), pool);
    MatMul(lw.wk, lw.bk, xb_.data(), n, k_.data(), pool);
    MatMul(lw.wv, lw.bv, xb_.data(), n, v_.data(), pool);
  }
  if (!lw.q_norm.empty()) {
    for (size_t h = 0; h < static_cast<size_t>(n) * hp.n_head; ++h) {
      kernels::RmsNorm(&q_[h * hd], lw.q_norm.data(), &q_[h * hd], hd, hp.norm_eps);
    }
    for (size_t h = 0; h < static_cast<size_t>(n) * hp.n_head_kv; ++h) {
      kernels::RmsNorm(&k_[h * hd], lw.k_norm.data(), &k_[h * hd], hd, hp.norm_eps);
    }
  }
  if (ropes_.empty()) return;
  // Queries at their absolute position (pos-shift: at their rank); keys
  // likewise, or, with pos-shift, later at attention time.
  const kernels::RopeParams rope = ropes_[layer]->params();
  for (int32_t t = 0; t < n; ++t) {
    kernels::RopeInPlace(&q_[t * q_dim], hp.n_head, hd, pos_shift_ ? rank0 + t : pos0 + t, rope);
    if (!pos_shift_) kernels::RopeInPlace(&k_[t * kv_dim], hp.n_head_kv, hd, pos0 + t, rope);
  }
}

void ForwardPass::FeedForward(const LayerWeights& lw, int32_t n, kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const int64_t n_ff = hp.n_ff;
  float* hidden = gate_.data();  // what w_down reads
  if (spec_.ffn == FfnKind::kGelu) {
    MatMul(lw.w_up, lw.b_up, xb_.data(), n, up_.data(), pool);
    kernels::GeluInPlace(up_.data(), n * n_ff);
    hidden = up_.data();
  } else {
    const float* up = up_.data();
    int64_t up_stride = n_ff;
    if (spec_.fused_gate_up) {
      // Rows of w_up: the gate's, then the up projection's.
      MatMul(lw.w_up, lw.b_up, xb_.data(), n, up_.data(), pool);
      for (int32_t t = 0; t < n; ++t) {
        std::memcpy(&gate_[t * n_ff], &up_[t * 2 * n_ff], n_ff * sizeof(float));
      }
      up = up_.data() + n_ff;
      up_stride = 2 * n_ff;
    } else {
      MatMul(lw.w_gate, lw.b_gate, xb_.data(), n, gate_.data(), pool);
      MatMul(lw.w_up, lw.b_up, xb_.data(), n, up_.data(), pool);
    }
    for (int32_t t = 0; t < n; ++t) {
      float* g = &gate_[t * n_ff];
      const float* u = up + t * up_stride;
      if (spec_.ffn == FfnKind::kSwiGlu) {
        kernels::SwiGluInPlace(g, u, n_ff);
      } else {
        kernels::GeGluInPlace(g, u, n_ff);
      }
    }
  }
  MatMul(lw.w_down, lw.b_down, hidden, n, ffn_out_.data(), pool);
  if (!lw.ffn_post_norm.weight.empty()) Norm(lw.ffn_post_norm, ffn_out_.data(), ffn_out_.data(), n);
}

KvHeadView ForwardPass::RotateKeysByRank(const KvHeadView& kv, int32_t layer, int32_t g) {
  int32_t* order = &slot_order_[static_cast<size_t>(g) * kv_capacity_];
  float* rotated = &rotated_k_[static_cast<size_t>(g) * kv_capacity_ * kv.head_dim];
  int32_t n_present = 0;
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    if (kv.pos[s] >= 0) order[n_present++] = s;
  }
  std::sort(order, order + n_present, [&](int32_t a, int32_t b) { return kv.pos[a] < kv.pos[b]; });
  const kernels::RopeParams rope = ropes_[layer]->params();
  for (int32_t rank = 0; rank < n_present; ++rank) {
    const int32_t s = order[rank];
    float* row = rotated + static_cast<size_t>(s) * kv.head_dim;
    kernels::DequantizeRow(kv.k_type, kv.KRow(s), row, kv.head_dim);
    kernels::RopeInPlace(row, 1, kv.head_dim, rank, rope);
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
  const size_t q_dim = hp.q_dim();
  const KvHeadView view = pos_shift_ ? RotateKeysByRank(cache.View(l, g), l, g) : cache.View(l, g);
  float* step = cache.step_attention(l, g);
  // TOVA ranks by the newest query's attention alone.
  if (step != nullptr) std::fill(step, step + view.n_slots, 0.0f);
  kernels::GroupAttentionOutputs outputs;
  outputs.probs = &probs_[static_cast<size_t>(g) * n_group * kv_capacity_];
  outputs.score_accum = cache.scores(l, g);
  for (int32_t t = 0; t < n; ++t) {
    const size_t first_head = static_cast<size_t>(g) * n_group * hd;
    outputs.out = &attn_out_[t * q_dim + first_head];
    outputs.step_attention = t == n - 1 ? step : nullptr;
    kernels::AttendGroup(&q_[t * q_dim + first_head], n_group, view, pos0 + t, hp.window(l),
                         hp.attn_scale, outputs);
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
  const size_t n_values = static_cast<size_t>(n) * hp.n_embd;
  const int32_t hd = hp.head_dim;
  const int32_t kv_dim = hp.kv_dim();

  Embed(tokens, pos0);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& lw = w.layers[l];
    // Every KV head holds the same number of tokens, so a query's rank in
    // the cache is the same for all heads.
    const int32_t rank0 = pos_shift_ ? cache.count(l, 0) : 0;
    Norm(lw.attn_norm, x_.data(), xb_.data(), n);
    ProjectQkv(lw, l, n, pos0, rank0, pool);
    // The whole chunk enters the cache first; causality comes from positions.
    for (int32_t g = 0; g < hp.n_head_kv; ++g) {
      for (int32_t t = 0; t < n; ++t) {
        cache.Append(l, g, pos0 + t, &k_[t * kv_dim + g * hd], &v_[t * kv_dim + g * hd]);
      }
    }
    // KV heads are independent (own slots, own scores): one per thread.
    const int64_t attention_work = static_cast<int64_t>(n) * cache.View(l, 0).n_slots * hp.q_dim();
    if (pool != nullptr && pool->size() > 1 && attention_work >= (1 << 16)) {
      pool->ParallelFor(hp.n_head_kv, [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g)
          AttendHead(cache, l, static_cast<int32_t>(g), n, pos0);
      });
    } else {
      for (int32_t g = 0; g < hp.n_head_kv; ++g) AttendHead(cache, l, g, n, pos0);
    }
    cache.EvictOverBudget(l);

    MatMul(lw.wo, lw.bo, attn_out_.data(), n, proj_.data(), pool);
    if (!lw.attn_post_norm.weight.empty()) Norm(lw.attn_post_norm, proj_.data(), proj_.data(), n);
    if (hp.parallel_residual) {
      // GPT-NeoX: the FFN reads the layer's input, not the attention's sum.
      Norm(lw.ffn_norm, x_.data(), xb_.data(), n);
      FeedForward(lw, n, pool);
      for (size_t i = 0; i < n_values; ++i) x_[i] = (ffn_out_[i] + x_[i]) + proj_[i];
    } else {
      for (size_t i = 0; i < n_values; ++i) x_[i] += proj_[i];
      Norm(lw.ffn_norm, x_.data(), xb_.data(), n);
      FeedForward(lw, n, pool);
      for (size_t i = 0; i < n_values; ++i) x_[i] += ffn_out_[i];
    }
  }

  const int32_t first = which == LogitsFor::kAllTokens ? 0 : n - 1;
  const size_t offset = static_cast<size_t>(first) * hp.n_embd;
  Norm(w.output_norm, &x_[offset], &xb_[offset], n - first);
  MatMul(w.output, w.output_bias, &xb_[offset], n - first, logits_.data(), pool);
  logits_size_ = static_cast<size_t>(n - first) * hp.n_vocab;
  if (hp.final_logit_softcap > 0.0f) {
    kernels::SoftcapInPlace(logits_.data(), static_cast<int64_t>(logits_size_),
                            hp.final_logit_softcap);
  }
}

}  // namespace h2o
