#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/attention_chunk.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace h2o {

ForwardPass::ForwardPass(const Model& model, int32_t max_rows, int n_threads)
    : model_(model),
      spec_(*model.hparams().spec),
      max_rows_(max_rows),
      n_parts_(std::max(1, n_threads)) {
  const HParams& hp = model.hparams();
  H2O_CHECK(max_rows >= 1);
  const size_t n = static_cast<size_t>(max_rows);
  const size_t q_dim = static_cast<size_t>(hp.q_dim());
  const size_t kv_dim = static_cast<size_t>(hp.kv_dim());
  row_pos_.resize(n);
  row_item_.resize(n);
  item_row0_.resize(n);
  embd_row_.resize(model.weights().token_embd.row_bytes());
  query_pos_.resize(n);
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
  up_.resize(n * hp.n_ff);
  const int64_t widest_input = std::max<int64_t>({hp.n_embd, hp.n_ff, static_cast<int64_t>(q_dim)});
  matmul_scratch_.resize(
      static_cast<size_t>(kernels::MatMulScratchFloats(widest_input, max_rows, n_parts_)));
}

void ForwardPass::ReserveKvCapacity(int32_t kv_capacity) {
  if (kv_capacity <= kv_capacity_) return;
  const HParams& hp = model_.hparams();
  kv_capacity_ = kv_capacity;
  const size_t parts = static_cast<size_t>(n_parts_);
  probs_.resize(parts * hp.n_group() * kv_capacity);
  chunk_scratch_floats_ =
      kernels::AttendGroupChunkScratchFloats(max_rows_, hp.n_group(), kv_capacity, hp.head_dim);
  chunk_scratch_.resize(parts * chunk_scratch_floats_);
  if (spec_.rotary()) {
    rotated_k_.resize(parts * kv_capacity * hp.head_dim);
    slot_order_.resize(parts * kv_capacity);
  }
}

namespace {

// Rows [first, first + count) of w as a matrix of their own, or an empty
// matrix where w's layout cannot split there.
WeightMatrix RowsOf(const WeightMatrix& w, int64_t first, int64_t count) {
  if (!kernels::RowsSplitAt(w.panels, first)) return {};
  WeightMatrix rows = w;
  rows.data = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(first) * w.row_bytes();
  rows.rows = count;
  return rows;
}

const float* BiasAt(const std::vector<float>& bias, size_t first) {
  return bias.empty() ? nullptr : bias.data() + first;
}

}  // namespace

void ForwardPass::MatMul(const WeightMatrix& w, const std::vector<float>& bias, const float* x,
                         int32_t n, float* y, kernels::ThreadPool* pool) {
  const Projection projection{w, BiasAt(bias, 0), y, w.rows};
  Project({&projection, 1}, x, n, pool);
}

void ForwardPass::Project(std::span<const Projection> projections, const float* x, int32_t n,
                          kernels::ThreadPool* pool, const kernels::RangeFn* after) {
  auto product_of = [](const Projection& p) -> kernels::SharedProduct {
    return {p.w.data, p.w.rows, p.y, p.y_stride, p.bias};
  };
  const WeightMatrix& first = projections[0].w;
  bool shared = true;
  for (const Projection& p : projections) {
    H2O_CHECK(p.w.data != nullptr);
    shared =
        shared && p.w.type == first.type && p.w.panels == first.panels && p.w.cols == first.cols;
  }
  if (shared) {
    kernels::SharedProduct products[kernels::kMaxSharedProducts];
    H2O_CHECK(projections.size() <= std::size(products));
    for (size_t i = 0; i < projections.size(); ++i) products[i] = product_of(projections[i]);
    kernels::MatMulShared(first.type, first.panels, {products, projections.size()}, first.cols, x,
                          n, matmul_scratch_.data(), pool, after);
    return;
  }
  for (const Projection& p : projections) {
    const kernels::SharedProduct product = product_of(p);
    kernels::MatMulShared(p.w.type, p.w.panels, {&product, 1}, p.w.cols, x, n,
                          matmul_scratch_.data(), pool);
  }
  if (after != nullptr) (*after)(0, first.rows);
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

void ForwardPass::Embed(std::span<const ForwardItem> items) {
  const HParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  const int32_t n_embd = hp.n_embd;
  size_t r = 0;
  for (const ForwardItem& item : items) {
    for (size_t t = 0; t < item.tokens.size(); ++t, ++r) {
      row_pos_[r] = item.pos0 + static_cast<int32_t>(t);
      row_item_[r] = static_cast<int32_t>(&item - items.data());
      float* x = &x_[r * n_embd];
      const uint8_t* row = embd_row_.data();
      if (w.token_embd.panels) {
        kernels::UnpackPanelRow(w.token_embd.type, w.token_embd.data, item.tokens[t], n_embd,
                                embd_row_.data());
      } else {
        row = static_cast<const uint8_t*>(w.token_embd.data) +
              static_cast<size_t>(item.tokens[t]) * w.token_embd.row_bytes();
      }
      kernels::DequantizeRow(w.token_embd.type, row, x, n_embd);
      if (w.position_embd.data != nullptr) {
        H2O_CHECK(row_pos_[r] < w.position_embd.rows);
        float* p = &xb_[r * n_embd];  // free until the first norm
        kernels::DequantizeRow(w.position_embd.type,
                               static_cast<const uint8_t*>(w.position_embd.data) +
                                   static_cast<size_t>(row_pos_[r]) * w.position_embd.row_bytes(),
                               p, n_embd);
        for (int32_t i = 0; i < n_embd; ++i) x[i] += p[i];
      }
      if (hp.embed_scale != 1.0f) {
        for (int32_t i = 0; i < n_embd; ++i) x[i] *= hp.embed_scale;
      }
    }
  }
}

void ForwardPass::ProjectQkv(const LayerWeights& lw, int32_t layer,
                             std::span<const ForwardItem> items, int32_t n,
                             kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const int32_t hd = hp.head_dim;
  const size_t q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
  const WeightMatrix wq = spec_.fused_qkv ? RowsOf(lw.wqkv, 0, q_dim) : lw.wq;
  const WeightMatrix wk = spec_.fused_qkv ? RowsOf(lw.wqkv, q_dim, kv_dim) : lw.wk;
  const WeightMatrix wv = spec_.fused_qkv ? RowsOf(lw.wqkv, q_dim + kv_dim, kv_dim) : lw.wv;
  if (wq.data != nullptr && wk.data != nullptr && wv.data != nullptr) {
    const Projection qkv[] = {{wq, BiasAt(lw.bq, 0), q_.data(), static_cast<int64_t>(q_dim)},
                              {wk, BiasAt(lw.bk, 0), k_.data(), static_cast<int64_t>(kv_dim)},
                              {wv, BiasAt(lw.bv, 0), v_.data(), static_cast<int64_t>(kv_dim)}};
    Project(qkv, xb_.data(), n, pool);
  } else {
    // Fused panels that cannot split between Q, K and V: one product, copied out.
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
  }
  // Queries at their absolute position (pos-shift: at their rank in the
  // cache, the same for every KV head); keys likewise, or, with pos-shift,
  // later at attention time.
  size_t r = 0;
  for (const ForwardItem& item : items) {
    const int32_t rank0 = item.pos_shift ? item.cache->count(layer, 0) : 0;
    for (size_t t = 0; t < item.tokens.size(); ++t, ++r) {
      query_pos_[r] = item.pos_shift ? rank0 + static_cast<int32_t>(t) : row_pos_[r];
    }
  }
  auto norm_and_rotate = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      float* q = &q_[row * q_dim];
      float* k = &k_[row * kv_dim];
      if (!lw.q_norm.empty()) {
        for (int32_t h = 0; h < hp.n_head; ++h) {
          kernels::RmsNorm(q + h * hd, lw.q_norm.data(), q + h * hd, hd, hp.norm_eps);
        }
        for (int32_t h = 0; h < hp.n_head_kv; ++h) {
          kernels::RmsNorm(k + h * hd, lw.k_norm.data(), k + h * hd, hd, hp.norm_eps);
        }
      }
      const ForwardItem& item = items[row_item_[row]];
      if (item.ropes.empty()) continue;
      const kernels::RopeParams rope = item.ropes[layer]->params();
      kernels::RopeInPlace(q, hp.n_head, hd, query_pos_[row], rope);
      if (!item.pos_shift) kernels::RopeInPlace(k, hp.n_head_kv, hd, row_pos_[row], rope);
    }
  };
  if (pool != nullptr) {
    pool->ParallelFor(n, norm_and_rotate);
  } else {
    norm_and_rotate(0, n);
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
    // The gate of each thread's share of the rows, applied where they were
    // just computed.
    auto gate = [&](int64_t begin, int64_t end) {
      for (int32_t t = 0; t < n; ++t) {
        float* g = &gate_[t * n_ff + begin];
        const float* u = &up_[t * n_ff + begin];
        if (spec_.ffn == FfnKind::kSwiGlu) {
          kernels::SwiGluInPlace(g, u, end - begin);
        } else {
          kernels::GeGluInPlace(g, u, end - begin);
        }
      }
    };
    const kernels::RangeFn after(gate);
    // Fused: rows of w_up are the gate's, then the up projection's; n_ff is
    // a multiple of w_down's block, where panels can split.
    const WeightMatrix w_gate = spec_.fused_gate_up ? RowsOf(lw.w_up, 0, n_ff) : lw.w_gate;
    const WeightMatrix w_up = spec_.fused_gate_up ? RowsOf(lw.w_up, n_ff, n_ff) : lw.w_up;
    H2O_CHECK(w_gate.data != nullptr && w_up.data != nullptr);
    const size_t up_bias = spec_.fused_gate_up ? n_ff : 0;
    const Projection gate_up[] = {{w_gate, BiasAt(lw.b_gate, 0), gate_.data(), n_ff},
                                  {w_up, BiasAt(lw.b_up, up_bias), up_.data(), n_ff}};
    Project(gate_up, xb_.data(), n, pool, &after);
  }
  MatMul(lw.w_down, lw.b_down, hidden, n, ffn_out_.data(), pool);
  if (!lw.ffn_post_norm.weight.empty()) Norm(lw.ffn_post_norm, ffn_out_.data(), ffn_out_.data(), n);
}

KvHeadView ForwardPass::RotateKeysByRank(const KvHeadView& kv, const kernels::RopeParams& rope,
                                         int32_t part) {
  int32_t* order = &slot_order_[static_cast<size_t>(part) * kv_capacity_];
  float* rotated = &rotated_k_[static_cast<size_t>(part) * kv_capacity_ * kv.head_dim];
  int32_t n_present = 0;
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    if (kv.pos[s] >= 0) order[n_present++] = s;
  }
  std::sort(order, order + n_present, [&](int32_t a, int32_t b) { return kv.pos[a] < kv.pos[b]; });
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

void ForwardPass::AttendHead(const ForwardItem& item, int32_t row0, int32_t l, int32_t g,
                             int32_t part) {
  const HParams& hp = model_.hparams();
  const int32_t hd = hp.head_dim;
  const int32_t n_group = hp.n_group();
  const size_t q_dim = hp.q_dim();
  KvCache& cache = *item.cache;
  KvHeadView view = cache.View(l, g);
  H2O_CHECK(view.n_slots <= kv_capacity_);
  if (item.pos_shift) view = RotateKeysByRank(view, item.ropes[l]->params(), part);
  const int32_t n = static_cast<int32_t>(item.tokens.size());
  const KvCache::HeadScoring scoring = cache.BeginAttention(l, g, n);
  float* step = scoring.step_attention;
  const int32_t first_scored = scoring.first_scored;
  kernels::GroupAttentionOutputs outputs;
  outputs.probs = &probs_[static_cast<size_t>(part) * n_group * kv_capacity_];
  outputs.score_accum = scoring.scores;
  const size_t first_head = static_cast<size_t>(g) * n_group * hd;
  // A chunk of consecutive positions attends tiled over query blocks (each
  // K/V row loaded once per block, results equal to the per-query calls);
  // an observer needs each query's probabilities, which only the per-query
  // kernel hands out.
  if (n > 1 && item.observer == nullptr) {
    kernels::ChunkAttentionOutputs chunk;
    chunk.out = &attn_out_[static_cast<size_t>(row0) * q_dim + first_head];
    chunk.out_stride = static_cast<int64_t>(q_dim);
    chunk.scratch = &chunk_scratch_[static_cast<size_t>(part) * chunk_scratch_floats_];
    // The queries before the first scored one, unscored (a chunk split
    // in two gives the results of one call).
    if (first_scored > 0) {
      kernels::AttendGroupChunk(&q_[static_cast<size_t>(row0) * q_dim + first_head],
                                static_cast<int64_t>(q_dim), first_scored, n_group, view,
                                row_pos_[row0], hp.window(l), hp.attn_scale, chunk);
      chunk.out += static_cast<size_t>(first_scored) * q_dim;
    }
    const size_t r0 = static_cast<size_t>(row0 + first_scored);
    chunk.score_accum = outputs.score_accum;
    chunk.step_attention = step;
    kernels::AttendGroupChunk(&q_[r0 * q_dim + first_head], static_cast<int64_t>(q_dim),
                              n - first_scored, n_group, view, row_pos_[r0], hp.window(l),
                              hp.attn_scale, chunk);
    return;
  }
  double* scores = outputs.score_accum;
  for (int32_t t = 0; t < n; ++t) {
    const size_t r = static_cast<size_t>(row0 + t);
    outputs.out = &attn_out_[r * q_dim + first_head];
    outputs.score_accum = t >= first_scored ? scores : nullptr;
    outputs.step_attention = t == n - 1 ? step : nullptr;
    kernels::AttendGroup(&q_[r * q_dim + first_head], n_group, view, row_pos_[r], hp.window(l),
                         hp.attn_scale, outputs);
    if (item.observer != nullptr) {
      const size_t n_slots = static_cast<size_t>(view.n_slots);
      for (int32_t j = 0; j < n_group; ++j) {
        item.observer->OnAttention(l, g * n_group + j, row_pos_[r], {view.pos, n_slots},
                                   {outputs.probs + j * n_slots, n_slots});
      }
    }
  }
}

void ForwardPass::Attend(int32_t l, std::span<const ForwardItem> items, kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const int32_t hd = hp.head_dim;
  const int32_t kv_dim = hp.kv_dim();
  // Each chunk enters its cache first (head by head, where that head
  // attends); causality comes from positions.
  int64_t work = 0;
  for (const ForwardItem& item : items) {
    const int64_t n = static_cast<int64_t>(item.tokens.size());
    work += n * (item.cache->View(l, 0).n_slots + n);
  }
  auto append = [&](const ForwardItem& item, size_t first_row, int32_t g) {
    for (size_t row = first_row; row < first_row + item.tokens.size(); ++row) {
      item.cache->Append(l, g, row_pos_[row], &k_[row * kv_dim + g * hd],
                         &v_[row * kv_dim + g * hd]);
    }
  };
  // (sequence, KV head) pairs are independent (own slots, own scores).
  const int64_t n_pairs = static_cast<int64_t>(items.size()) * hp.n_head_kv;
  size_t row0 = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    item_row0_[i] = static_cast<int32_t>(row0);
    row0 += items[i].tokens.size();
  }
  auto run_pairs = [&](int thread, int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t i = p / hp.n_head_kv;
      const auto g = static_cast<int32_t>(p % hp.n_head_kv);
      // The next pair's new rows, while this one runs (decode: one row each).
      if (p + 1 < end && items[(p + 1) / hp.n_head_kv].tokens.size() == 1) {
        items[(p + 1) / hp.n_head_kv].cache->PrefetchNextAppend(
            l, static_cast<int32_t>((p + 1) % hp.n_head_kv));
      }
      append(items[i], item_row0_[i], g);
      AttendHead(items[i], item_row0_[i], l, g, thread);
      // Eviction scans every slot of the head: on the pool it runs beside
      // the other heads' attention instead of after it.
      if (items[i].cache->evicts_per_head()) items[i].cache->EvictHeadOverBudget(l, g);
    }
  };
  if (pool != nullptr && pool->size() > 1 && work * hp.q_dim() >= (1 << 16)) {
    H2O_CHECK(pool->size() <= n_parts_);
    // Claimed a few pairs at a time, so a thread the machine slows down
    // takes fewer (a decode step's 32 sequences x 12 heads are 384 pairs).
    const int64_t grain = std::max<int64_t>(1, n_pairs / (16 * pool->size()));
    pool->ParallelForClaimed(n_pairs, grain, run_pairs);
  } else {
    run_pairs(0, 0, n_pairs);
  }
  for (const ForwardItem& item : items) {
    if (!item.cache->evicts_per_head()) item.cache->EvictOverBudget(l);
  }
}

void ForwardPass::Logits(std::span<const ForwardItem> items, kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  const size_t n_embd = hp.n_embd, n_vocab = hp.n_vocab;
  // The rows asked for, normed into xb_ (free now) one after another.
  int32_t m = 0;
  int32_t asking = 0;
  size_t r = 0;
  for (const ForwardItem& item : items) {
    const size_t n = item.tokens.size();
    if (item.logits != nullptr) {
      const size_t first = item.which == LogitsFor::kAllTokens ? 0 : n - 1;
      Norm(w.output_norm, &x_[(r + first) * n_embd], &xb_[m * n_embd],
           static_cast<int32_t>(n - first));
      m += static_cast<int32_t>(n - first);
      ++asking;
    }
    r += n;
  }
  if (m == 0) return;
  // One asking item gets its logits written in place; several share one
  // product and are copied out.
  const ForwardItem* only = nullptr;
  for (const ForwardItem& item : items) {
    if (item.logits != nullptr && asking == 1) only = &item;
  }
  float* out = only != nullptr ? only->logits : nullptr;
  if (out == nullptr) {
    if (logits_.size() < static_cast<size_t>(m) * n_vocab) logits_.resize(m * n_vocab);
    out = logits_.data();
  }
  MatMul(w.output, w.output_bias, xb_.data(), m, out, pool);
  if (hp.final_logit_softcap > 0.0f) {
    kernels::SoftcapInPlace(out, static_cast<int64_t>(m) * n_vocab, hp.final_logit_softcap);
  }
  if (only != nullptr) return;
  // Copied out on every thread (a 32-sequence step copies 4 MiB).
  auto rows_of = [](const ForwardItem& item) -> size_t {
    if (item.logits == nullptr) return 0;
    return item.which == LogitsFor::kAllTokens ? item.tokens.size() : 1;
  };
  auto copy = [&](int64_t begin, int64_t end) {
    size_t copied = 0;
    for (int64_t i = 0; i < begin; ++i) copied += rows_of(items[i]);
    for (int64_t i = begin; i < end; ++i) {
      const size_t rows = rows_of(items[i]);
      if (rows > 0) {
        std::memcpy(items[i].logits, out + copied * n_vocab, rows * n_vocab * sizeof(float));
      }
      copied += rows;
    }
  };
  if (pool != nullptr) {
    pool->ParallelFor(static_cast<int64_t>(items.size()), copy);
  } else {
    copy(0, static_cast<int64_t>(items.size()));
  }
}

void ForwardPass::Run(std::span<const ForwardItem> items, kernels::ThreadPool* pool) {
  const HParams& hp = model_.hparams();
  const ModelWeights& w = model_.weights();
  int32_t n = 0;
  for (const ForwardItem& item : items) n += static_cast<int32_t>(item.tokens.size());
  H2O_CHECK(n >= 1 && n <= max_rows_);
  const size_t n_values = static_cast<size_t>(n) * hp.n_embd;

  Embed(items);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    const LayerWeights& lw = w.layers[l];
    Norm(lw.attn_norm, x_.data(), xb_.data(), n);
    ProjectQkv(lw, l, items, n, pool);
    Attend(l, items, pool);
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
  SumHidden(items);
  Logits(items, pool);
}

void ForwardPass::SumHidden(std::span<const ForwardItem> items) {
  const size_t n_embd = model_.hparams().n_embd;
  size_t r = 0;
  for (const ForwardItem& item : items) {
    const size_t n = item.tokens.size();
    if (item.hidden_sum != nullptr) {
      // Before Logits, which norms into xb_ again.
      Norm(model_.weights().output_norm, &x_[r * n_embd], xb_.data(), static_cast<int32_t>(n));
      for (size_t t = 0; t < n; ++t) {
        for (size_t i = 0; i < n_embd; ++i) item.hidden_sum[i] += xb_[t * n_embd + i];
      }
    }
    r += n;
  }
}

}  // namespace h2o
