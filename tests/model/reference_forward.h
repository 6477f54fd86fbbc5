// A double-precision Llama forward pass written straight from the formulas
// (RMSNorm, plain RoPE, softmax attention over whatever each (layer, KV
// head) keeps, SwiGLU), sharing no code with src/model: the brute-force
// simulation that policy tests compare the engine against. It never evicts
// by itself: a test decides what each (layer, KV head) keeps (from the
// policy's rule in DESIGN.md section 3) and calls KeepOnly. Llama-shaped
// models only (the bundled stories260K).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/quant.h"
#include "model/model.h"

namespace h2o::testing {

class ReferenceForward {
 public:
  // What a policy ranks eviction candidates by (DESIGN.md section 3); the
  // lowest goes first, ties to the lowest position.
  enum class Victim {
    kLowestAcc,       // h2o, h2only
    kLowestLast,      // tova
    kLowestPosition,  // local, sink
    kAny,             // random: any candidate (Evict takes the lowest position)
  };

  struct Entry {
    int32_t pos = 0;
    std::vector<double> k;  // before RoPE, so pos-shift can rotate it to its rank
    std::vector<double> v;
    double acc = 0.0;        // H2O: attention received, summed over the group's heads and all queries
    double last = 0.0;       // TOVA: the last query's attention, summed over the group's heads
  };

  // pos_shift: keys are rotated to their rank among what is kept and each
  // query to its own rank, instead of their absolute positions.
  explicit ReferenceForward(const Model& model, bool pos_shift = false)
      : model_(model),
        hp_(model.hparams()),
        pos_shift_(pos_shift),
        kept_(static_cast<size_t>(hp_.n_layer) * hp_.n_head_kv) {
    EXPECT_EQ(hp_.arch, "llama");
    EXPECT_EQ(hp_.n_rot, hp_.head_dim);
    EXPECT_EQ(hp_.rope_freq_scale, 1.0f);
    EXPECT_EQ(hp_.rope_mode, kernels::RopeMode::kNormal);
  }

  // Called with each query head's attention row, over the kept entries in
  // ascending position (with a full cache: key position = index).
  std::function<void(int32_t layer, int32_t head, int32_t query_pos, const std::vector<double>& probs)>
      on_attention;

  // Feeds the chunk at the next positions; returns the last token's logits.
  std::vector<double> Eval(std::span<const int32_t> chunk) {
    const ModelWeights& w = model_.weights();
    const int32_t n = static_cast<int32_t>(chunk.size());
    const int32_t hd = hp_.head_dim;
    std::vector<std::vector<double>> x(n);
    for (int32_t t = 0; t < n; ++t) x[t] = Row(w.token_embd, chunk[t]);
    for (int32_t l = 0; l < hp_.n_layer; ++l) {
      const LayerWeights& lw = w.layers[l];
      std::vector<std::vector<double>> q(n);
      for (int32_t t = 0; t < n; ++t) {
        const std::vector<double> h = RmsNorm(x[t], lw.attn_norm.weight);
        q[t] = MatVec(lw.wq, h);
        const std::vector<double> k = MatVec(lw.wk, h), v = MatVec(lw.wv, h);
        for (int32_t g = 0; g < hp_.n_head_kv; ++g) {
          Entry e;
          e.pos = n_past_ + t;
          e.k.assign(k.begin() + g * hd, k.begin() + (g + 1) * hd);
          e.v.assign(v.begin() + g * hd, v.begin() + (g + 1) * hd);
          kept(l, g).push_back(std::move(e));
        }
      }
      for (int32_t g = 0; g < hp_.n_head_kv; ++g) {
        for (Entry& e : kept(l, g)) e.last = 0.0;
      }
      std::vector<std::vector<double>> attn(n, std::vector<double>(hp_.q_dim(), 0.0));
      for (int32_t g = 0; g < hp_.n_head_kv; ++g) {
        std::vector<Entry>& entries = kept(l, g);  // ascending positions
        std::vector<std::vector<double>> keys(entries.size());
        for (size_t s = 0; s < entries.size(); ++s) {
          keys[s] = entries[s].k;
          Rope(keys[s].data(), pos_shift_ ? static_cast<int32_t>(s) : entries[s].pos);
        }
        for (int32_t t = 0; t < n; ++t) {
          const int32_t pos = n_past_ + t;
          size_t present = 0;  // entries at positions <= pos: a prefix
          while (present < entries.size() && entries[present].pos <= pos) ++present;
          for (int32_t j = 0; j < hp_.n_group(); ++j) {
            const int32_t head = g * hp_.n_group() + j;
            std::vector<double> qh(q[t].begin() + head * hd, q[t].begin() + (head + 1) * hd);
            Rope(qh.data(), pos_shift_ ? static_cast<int32_t>(present) - 1 : pos);
            std::vector<double> p(present);
            double max = -INFINITY, sum = 0.0;
            for (size_t s = 0; s < present; ++s) {
              for (int32_t i = 0; i < hd; ++i) p[s] += qh[i] * keys[s][i];
              p[s] /= std::sqrt(static_cast<double>(hd));
              max = std::max(max, p[s]);
            }
            for (double& e : p) sum += (e = std::exp(e - max));
            for (double& e : p) e /= sum;
            if (on_attention) on_attention(l, head, pos, p);
            for (size_t s = 0; s < present; ++s) {
              entries[s].acc += p[s];
              if (t == n - 1) entries[s].last += p[s];
              for (int32_t i = 0; i < hd; ++i) attn[t][head * hd + i] += p[s] * entries[s].v[i];
            }
          }
        }
      }
      for (int32_t t = 0; t < n; ++t) {
        const std::vector<double> o = MatVec(lw.wo, attn[t]);
        for (int32_t i = 0; i < hp_.n_embd; ++i) x[t][i] += o[i];
        const std::vector<double> h = RmsNorm(x[t], lw.ffn_norm.weight);
        const std::vector<double> gate = MatVec(lw.w_gate, h), up = MatVec(lw.w_up, h);
        std::vector<double> act(gate.size());
        for (size_t i = 0; i < act.size(); ++i) act[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
        const std::vector<double> down = MatVec(lw.w_down, act);
        for (int32_t i = 0; i < hp_.n_embd; ++i) x[t][i] += down[i];
      }
    }
    n_past_ += n;
    return MatVec(w.output, RmsNorm(x[n - 1], w.output_norm.weight));
  }

  static double Key(const Entry& e, Victim victim) {
    switch (victim) {
      case Victim::kLowestAcc: return e.acc;
      case Victim::kLowestLast: return e.last;
      case Victim::kLowestPosition:
      case Victim::kAny: return e.pos;
    }
    return 0.0;
  }

  // Evicts from every (layer, KV head) while it holds more than `budget`:
  // the lowest key among all but the `recent` highest positions.
  void Evict(int32_t budget, int32_t recent, Victim victim) {
    for (std::vector<Entry>& entries : kept_) {
      while (static_cast<int32_t>(entries.size()) > budget) {
        const auto candidates_end = entries.end() - std::min<int32_t>(recent, entries.size());
        auto lowest = std::min_element(entries.begin(), candidates_end, [&](const Entry& a, const Entry& b) {
          return Key(a, victim) < Key(b, victim);  // min_element keeps the first (lowest position) of equals
        });
        entries.erase(lowest);
      }
    }
  }

  std::vector<Entry>& kept(int32_t l, int32_t g) { return kept_[static_cast<size_t>(l) * hp_.n_head_kv + g]; }

  std::vector<int32_t> Positions(int32_t l, int32_t g) {
    std::vector<int32_t> pos;
    for (const Entry& e : kept(l, g)) pos.push_back(e.pos);
    return pos;
  }

  // Drops every entry of (l, g) whose position is not in `positions`.
  void KeepOnly(int32_t l, int32_t g, const std::vector<int32_t>& positions) {
    std::erase_if(kept(l, g), [&](const Entry& e) {
      return std::find(positions.begin(), positions.end(), e.pos) == positions.end();
    });
  }

 private:
  std::vector<double> Row(const WeightMatrix& m, int64_t r) const {
    std::vector<float> row(m.cols);
    kernels::DequantizeRow(m.type, static_cast<const uint8_t*>(m.data) + r * m.row_bytes(), row.data(), m.cols);
    return {row.begin(), row.end()};
  }

  std::vector<double> MatVec(const WeightMatrix& m, const std::vector<double>& x) const {
    std::vector<double> y(m.rows, 0.0);
    for (int64_t r = 0; r < m.rows; ++r) {
      const std::vector<double> row = Row(m, r);
      for (int64_t c = 0; c < m.cols; ++c) y[r] += row[c] * x[c];
    }
    return y;
  }

  std::vector<double> RmsNorm(const std::vector<double>& x, const std::vector<float>& weight) const {
    double sum_sq = 0.0;
    for (double v : x) sum_sq += v * v;
    const double scale = 1.0 / std::sqrt(sum_sq / static_cast<double>(x.size()) + hp_.norm_eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * weight[i];
    return y;
  }

  // Llama's RoPE: adjacent pairs (2i, 2i+1) turned by pos * base^(-2i/d).
  void Rope(double* v, int32_t pos) const {
    for (int32_t i = 0; i < hp_.head_dim / 2; ++i) {
      const double theta = pos * std::pow(static_cast<double>(hp_.rope_freq_base), -2.0 * i / hp_.head_dim);
      const double a = v[2 * i], b = v[2 * i + 1];
      v[2 * i] = a * std::cos(theta) - b * std::sin(theta);
      v[2 * i + 1] = a * std::sin(theta) + b * std::cos(theta);
    }
  }

  const Model& model_;
  const HParams& hp_;
  bool pos_shift_;
  int32_t n_past_ = 0;
  std::vector<std::vector<Entry>> kept_;
};

}  // namespace h2o::testing
