// The attention observer hook reports the probabilities the forward pass
// used: checked against an independent double-precision recomputation of
// layer 0 from the weights, against the H2O scores the cache accumulates
// from the same probabilities, and for shape (one causal row per query
// head and position, summing to 1).
#include "model/attention_observer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/quant.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

// Keeps every row by key position: rows[layer][head][query_pos][key_pos]
// (masked entries dropped). Storage is per (layer, head), sized up front,
// so concurrent calls for different heads are safe.
class RecordingObserver final : public AttentionObserver {
 public:
  RecordingObserver(int32_t n_layer, int32_t n_head, int32_t n_positions)
      : rows_(n_layer, std::vector<std::vector<std::vector<double>>>(n_head)),
        masked_mass_(static_cast<size_t>(n_layer) * n_head, 0.0),
        n_head_(n_head),
        n_positions_(n_positions) {}

  void OnAttention(int32_t layer, int32_t head, int32_t query_pos,
                   std::span<const int32_t> key_positions, std::span<const float> probs) override {
    ASSERT_EQ(key_positions.size(), probs.size());
    auto& head_rows = rows_[layer][head];
    // Rows of one head arrive in query order.
    ASSERT_EQ(static_cast<int32_t>(head_rows.size()), query_pos);
    std::vector<double> row(n_positions_, -1.0);
    for (size_t s = 0; s < probs.size(); ++s) {
      const int32_t pos = key_positions[s];
      if (pos < 0 || pos > query_pos) {
        masked_mass_[static_cast<size_t>(layer) * n_head_ + head] += std::fabs(probs[s]);
      } else {
        ASSERT_EQ(row[pos], -1.0) << "position " << pos << " reported twice";
        row[pos] = probs[s];
      }
    }
    head_rows.push_back(std::move(row));
  }

  // [query_pos][key_pos]; -1 where the key was not reported.
  const std::vector<std::vector<double>>& rows(int32_t layer, int32_t head) const {
    return rows_[layer][head];
  }
  double masked_mass(int32_t layer, int32_t head) const {
    return masked_mass_[static_cast<size_t>(layer) * n_head_ + head];
  }

 private:
  std::vector<std::vector<std::vector<std::vector<double>>>> rows_;
  std::vector<double> masked_mass_;
  int32_t n_head_;
  int32_t n_positions_;
};

std::vector<int32_t> FirstTokens(size_t n) { return testing::ReadStreamPrefix("s001.txt", n); }

std::unique_ptr<Session> MakeSession(const Model& model, const std::string& kv, int32_t chunk,
                                     int32_t n_threads, TensorType kv_type) {
  auto spec = ParseKvSpec(kv);
  EXPECT_TRUE(spec.ok());
  auto plan = ResolveKvSpec(*spec, std::nullopt);
  EXPECT_TRUE(plan.ok());
  SessionOptions options;
  options.kv = *plan;
  options.max_chunk = chunk;
  options.n_threads = n_threads;
  options.kv_types = {kv_type, kv_type};
  auto session = Session::Create(model, options);
  EXPECT_TRUE(session.ok());
  return std::move(session).value();
}

// Dequantized row r of w, in double.
std::vector<double> Row(const WeightMatrix& w, int64_t r) {
  std::vector<float> row(w.cols);
  kernels::DequantizeRow(w.type, static_cast<const uint8_t*>(w.data) + r * w.row_bytes(),
                         row.data(), w.cols);
  return {row.begin(), row.end()};
}

// w x for a [rows][cols] weight matrix, in double.
std::vector<double> MatVec(const WeightMatrix& w, const std::vector<double>& x) {
  std::vector<double> y(w.rows);
  for (int64_t r = 0; r < w.rows; ++r) {
    const std::vector<double> row = Row(w, r);
    for (int64_t c = 0; c < w.cols; ++c) y[r] += row[c] * x[c];
  }
  return y;
}

// Rotates one head's vector (head_dim values at `v`) to position pos
// (plain RoPE: the bundled model has no scaling and no rope_freqs).
void Rope(double* v, const HParams& hp, int32_t pos) {
  ASSERT_EQ(hp.rope_freq_scale, 1.0f);
  const int32_t half = hp.head_dim / 2;
  for (int32_t i = 0; i < half; ++i) {
    const double theta =
        pos * std::pow(static_cast<double>(hp.rope_freq_base), -2.0 * i / hp.head_dim);
    const bool pairs_adjacent = hp.rope_mode == kernels::RopeMode::kNormal;
    double& a = v[pairs_adjacent ? 2 * i : i];
    double& b = v[pairs_adjacent ? 2 * i + 1 : i + half];
    const double a0 = a, b0 = b;
    a = a0 * std::cos(theta) - b0 * std::sin(theta);
    b = a0 * std::sin(theta) + b0 * std::cos(theta);
  }
}

TEST(AttentionObserver, LayerZeroMatchesADoublePrecisionRecomputation) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const HParams& hp = (*model)->hparams();
  ASSERT_EQ(hp.n_rot, hp.head_dim);  // the recomputation rotates whole heads
  const ModelWeights& w = (*model)->weights();
  const std::vector<int32_t> ids = FirstTokens(24);
  const int32_t n = static_cast<int32_t>(ids.size());

  // q and k of every token at layer 0, from the embeddings.
  std::vector<std::vector<double>> q(n), k(n);
  for (int32_t t = 0; t < n; ++t) {
    const std::vector<double> x = Row(w.token_embd, ids[t]);
    double sum_sq = 0.0;
    for (double v : x) sum_sq += v * v;
    const double scale = 1.0 / std::sqrt(sum_sq / hp.n_embd + hp.norm_eps);
    std::vector<double> normed(hp.n_embd);
    for (int32_t i = 0; i < hp.n_embd; ++i) normed[i] = x[i] * scale * w.layers[0].attn_norm.weight[i];
    q[t] = MatVec(w.layers[0].wq, normed);
    k[t] = MatVec(w.layers[0].wk, normed);
    for (int32_t h = 0; h < hp.n_head; ++h) Rope(&q[t][h * hp.head_dim], hp, t);
    for (int32_t g = 0; g < hp.n_head_kv; ++g) Rope(&k[t][g * hp.head_dim], hp, t);
  }

  // f32 cache, so the engine's keys are not rounded to f16.
  auto session = MakeSession(**model, "full", /*chunk=*/n, /*n_threads=*/2, TensorType::kF32);
  RecordingObserver observer(hp.n_layer, hp.n_head, n);
  session->set_attention_observer(&observer);
  ASSERT_TRUE(session->Eval(ids).ok());

  double worst = 0.0;
  for (int32_t h = 0; h < hp.n_head; ++h) {
    const int32_t g = h / hp.n_group();
    const auto& rows = observer.rows(0, h);
    ASSERT_EQ(static_cast<int32_t>(rows.size()), n);
    for (int32_t t = 0; t < n; ++t) {
      std::vector<double> logits(t + 1);
      double max = -INFINITY;
      for (int32_t s = 0; s <= t; ++s) {
        for (int32_t i = 0; i < hp.head_dim; ++i) {
          logits[s] += q[t][h * hp.head_dim + i] * k[s][g * hp.head_dim + i];
        }
        logits[s] /= std::sqrt(static_cast<double>(hp.head_dim));
        max = std::max(max, logits[s]);
      }
      double sum = 0.0;
      for (double& l : logits) sum += (l = std::exp(l - max));
      for (int32_t s = 0; s <= t; ++s) {
        ASSERT_GE(rows[t][s], 0.0) << "head " << h << " query " << t << " key " << s;
        worst = std::max(worst, std::fabs(rows[t][s] - logits[s] / sum));
      }
    }
  }
  EXPECT_LT(worst, 2e-5);
}

TEST(AttentionObserver, EveryLayerAndHeadGetsOneCausalRowPerQuerySummingToOne) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const HParams& hp = (*model)->hparams();
  const std::vector<int32_t> ids = FirstTokens(120);
  const int32_t n = static_cast<int32_t>(ids.size());
  // Chunk 50: rows of later chunks see earlier chunks' slots; 4 threads:
  // the KV heads run in parallel.
  auto session = MakeSession(**model, "full", /*chunk=*/50, /*n_threads=*/4, TensorType::kF16);
  RecordingObserver observer(hp.n_layer, hp.n_head, n);
  session->set_attention_observer(&observer);
  ASSERT_TRUE(session->Eval(ids).ok());
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    for (int32_t h = 0; h < hp.n_head; ++h) {
      const auto& rows = observer.rows(l, h);
      ASSERT_EQ(static_cast<int32_t>(rows.size()), n) << "layer " << l << " head " << h;
      EXPECT_EQ(observer.masked_mass(l, h), 0.0);
      for (int32_t t = 0; t < n; ++t) {
        double sum = 0.0;
        for (int32_t s = 0; s <= t; ++s) {
          ASSERT_GE(rows[t][s], 0.0) << "layer " << l << " head " << h << " query " << t;
          sum += rows[t][s];
        }
        EXPECT_NEAR(sum, 1.0, 1e-5) << "layer " << l << " head " << h << " query " << t;
      }
    }
  }
}

TEST(AttentionObserver, SumsOverQueriesEqualTheCacheScores) {
  // An h2o cache whose budget covers the sequence never evicts, and its
  // score of a token is the attention the KV head's query heads gave it.
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const HParams& hp = (*model)->hparams();
  const std::vector<int32_t> ids = FirstTokens(100);
  const int32_t n = static_cast<int32_t>(ids.size());
  for (int32_t chunk : {1, 7}) {
    auto session = MakeSession(**model, "h2o:heavy=100,recent=100", chunk, 2, TensorType::kF16);
    RecordingObserver observer(hp.n_layer, hp.n_head, n);
    session->set_attention_observer(&observer);
    ASSERT_TRUE(session->Eval(ids).ok());
    for (int32_t l = 0; l < hp.n_layer; ++l) {
      for (int32_t g = 0; g < hp.n_head_kv; ++g) {
        const KvHeadView view = session->cache().View(l, g);
        const double* scores = session->cache().scores(l, g);
        ASSERT_NE(scores, nullptr);
        ASSERT_EQ(session->cache().count(l, g), n);
        for (int32_t slot = 0; slot < view.n_slots; ++slot) {
          const int32_t pos = view.pos[slot];
          ASSERT_GE(pos, 0);
          double observed = 0.0;
          for (int32_t j = 0; j < hp.n_group(); ++j) {
            const auto& rows = observer.rows(l, g * hp.n_group() + j);
            for (int32_t t = pos; t < n; ++t) observed += rows[t][pos];
          }
          EXPECT_NEAR(observed, scores[slot], 1e-5 * (1.0 + scores[slot]))
              << "chunk " << chunk << " layer " << l << " KV head " << g << " position " << pos;
        }
      }
    }
  }
}

TEST(AttentionObserver, ObservingDoesNotChangeTheLogits) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const HParams& hp = (*model)->hparams();
  const std::vector<int32_t> ids = FirstTokens(60);
  auto plain = MakeSession(**model, "full", 60, 2, TensorType::kF16);
  auto observed = MakeSession(**model, "full", 60, 2, TensorType::kF16);
  RecordingObserver observer(hp.n_layer, hp.n_head, 60);
  observed->set_attention_observer(&observer);
  ASSERT_TRUE(plain->Eval(ids).ok());
  ASSERT_TRUE(observed->Eval(ids).ok());
  const auto a = plain->last_logits();
  const auto b = observed->last_logits();
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  // Unset again: later Evals report nothing more.
  observed->set_attention_observer(nullptr);
  ASSERT_TRUE(observed->Eval(std::vector<int32_t>{ids[0]}).ok());
  EXPECT_EQ(observer.rows(0, 0).size(), 60u);
}

}  // namespace
}  // namespace h2o
