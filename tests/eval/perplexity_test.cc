// Scoring in lockstep against a full-cache reference: KL and top-1
// agreement equal a double-precision computation written here from two
// separate runs' stored distributions; windows and the standard error are
// checked on hand-worked cases.
#include "eval/perplexity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "convert/mkmodel.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "q8_model.h"
#include "runtime/engine.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

// Every next-token distribution of a separate run, one token at a time.
std::vector<std::vector<float>> AllLogits(Session& session, const std::vector<int32_t>& ids) {
  session.Reset();
  std::vector<std::vector<float>> rows;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    EXPECT_TRUE(session.Eval(std::span(&ids[t], 1)).ok());
    const auto last = session.last_logits();
    rows.emplace_back(last.begin(), last.end());
  }
  return rows;
}

std::vector<double> LogProbs(const std::vector<float>& logits) {
  double max = logits[0];
  for (float l : logits) max = std::max<double>(max, l);
  double sum = 0.0;
  for (float l : logits) sum += std::exp(l - max);
  std::vector<double> out;
  for (float l : logits) out.push_back(l - max - std::log(sum));
  return out;
}

size_t FirstArgMax(const std::vector<float>& v) {
  size_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] > v[best]) best = i;
  }
  return best;
}

ScoreOptions ScoringFrom(int64_t first_scored, bool keep_token_nll) {
  ScoreOptions o;
  o.first_scored = first_scored;
  o.keep_token_nll = keep_token_nll;
  return o;
}

std::unique_ptr<Session> NewSession(const Model& model, const std::string& kv) {
  SessionOptions o;
  o.n_ctx = 512;
  o.max_chunk = 1;
  o.kv = ResolveKvSpec(ParseKvSpec(kv).value(), std::nullopt).value();
  auto s = Session::Create(model, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

// A q8_0 model: its matrix products are exact integer sums whatever the
// batch, so sequences scored together in one batch give bit for bit the
// logits of separate runs (f32 weights would round a batch's blocked
// product differently from a single row's dot).

std::unique_ptr<Sequence> NewSequence(Engine& engine, const std::string& kv) {
  SequenceOptions o;
  o.n_ctx = 512;
  o.max_chunk = 1;
  o.kv = ResolveKvSpec(ParseKvSpec(kv).value(), std::nullopt).value();
  auto s = engine.NewSequence(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

TEST(ScoreStreamLockstep, KlAndTop1EqualSeparateRuns) {
  const Model& model = testing::Q8Model();
  auto full = NewSession(model, "full");
  auto h2o = NewSession(model, "h2o:heavy=8,recent=8");
  for (const char* name : {"s001.txt", "s012.txt"}) {
    SCOPED_TRACE(name);
    const std::vector<int32_t> ids = testing::ReadStream(name);
    const auto p = AllLogits(*full, ids);
    const auto q = AllLogits(*h2o, ids);
    double kl = 0.0, nll_full = 0.0, nll_h2o = 0.0;
    int64_t agree = 0;
    for (size_t t = 0; t < p.size(); ++t) {
      const auto lp = LogProbs(p[t]), lq = LogProbs(q[t]);
      for (size_t v = 0; v < lp.size(); ++v) kl += std::exp(lp[v]) * (lp[v] - lq[v]);
      agree += FirstArgMax(p[t]) == FirstArgMax(q[t]);
      nll_full -= lp[ids[t + 1]];
      nll_h2o -= lq[ids[t + 1]];
    }
    ASSERT_GT(kl, 0.0);

    // Fresh sequences on one engine, fed in lockstep (one batch per
    // token); the reference is a separate one.
    auto engine = Engine::Create(model, {.n_threads = 1, .max_batch_tokens = 2});
    ASSERT_TRUE(engine.ok());
    auto ref = NewSequence(**engine, "full");
    auto h2o_2 = NewSequence(**engine, "h2o:heavy=8,recent=8");
    Sequence* sequences[] = {h2o_2.get(), ref.get()};
    auto scores = ScoreStreamLockstep(**engine, sequences, ref.get(), ids, ScoringFrom(0, true));
    ASSERT_TRUE(scores.ok()) << scores.status().message();
    const StreamScore& s = (*scores)[0];
    EXPECT_EQ(s.nll.tokens, static_cast<int64_t>(ids.size()) - 1);
    EXPECT_NEAR(s.kl_sum, kl, 1e-9 * kl);
    EXPECT_EQ(s.top1_agree, agree);
    EXPECT_NEAR(s.nll.nll_sum, nll_h2o, 1e-9 * nll_h2o);
    ASSERT_EQ(s.token_nll.size(), p.size());
    EXPECT_NEAR(s.token_nll[5], -LogProbs(q[5])[ids[6]], 1e-12);
    // The reference scored against itself.
    EXPECT_EQ((*scores)[1].kl_sum, 0.0);
    EXPECT_EQ((*scores)[1].top1_agree, (*scores)[1].nll.tokens);
    EXPECT_NEAR((*scores)[1].nll.nll_sum, nll_full, 1e-9 * nll_full);
  }
}

TEST(ScoreStreamLockstep, ScoresFromFirstScored) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto session = NewSession(**model, "local:recent=8");
  const std::vector<int32_t> ids = testing::ReadStream("s001.txt");
  const auto q = AllLogits(*session, ids);
  double tail = 0.0;
  for (size_t t = 100; t < q.size(); ++t) tail -= LogProbs(q[t])[ids[t + 1]];
  Sequence* sequences[] = {&session->sequence()};
  ScoreOptions options = ScoringFrom(100, false);
  int64_t fed = 0, calls = 0;
  options.on_chunk = [&](int64_t n) { fed += n, ++calls; };
  auto scores = ScoreStreamLockstep(session->engine(), sequences, nullptr, ids, options);
  EXPECT_EQ(fed, static_cast<int64_t>(ids.size()) - 1);  // every prediction is fed, scored or not
  EXPECT_EQ(calls, fed);                                 // chunks of 1
  ASSERT_TRUE(scores.ok()) << scores.status().message();
  EXPECT_EQ((*scores)[0].nll.tokens, static_cast<int64_t>(q.size()) - 100);
  EXPECT_NEAR((*scores)[0].nll.nll_sum, tail, 1e-9 * tail);
  EXPECT_TRUE((*scores)[0].token_nll.empty());
  const auto nothing =
      ScoreStreamLockstep(session->engine(), sequences, nullptr, ids, ScoringFrom(169, false));
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.status().message().find("nothing to score"), std::string::npos);
}

TEST(SplitWindows, FixedSlicesWithBosFirstAndTailDropped) {
  const std::vector<int32_t> ids = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  EXPECT_EQ(SplitWindows(ids, 4, 1),
            (std::vector<std::vector<int32_t>>{{1, 11, 12, 13}, {1, 15, 16, 17}}));
  EXPECT_EQ(SplitWindows(ids, 4, -1),
            (std::vector<std::vector<int32_t>>{{10, 11, 12, 13}, {14, 15, 16, 17}}));
  EXPECT_TRUE(SplitWindows(ids, 11, 1).empty());
  EXPECT_EQ(WindowFirstScored(512), 256);
  EXPECT_EQ(WindowFirstScored(5), 2);
}

TEST(NllResult, PerplexityErrorIsLlamaPerplexitys) {
  // nll 1, 2, 3: mean 2, mean of squares 14/3, variance 2/3;
  // sqrt(2/3 / 2) * e^2.
  const NllResult r{3, 6.0, 14.0};
  EXPECT_NEAR(r.perplexity(), std::exp(2.0), 1e-12);
  EXPECT_NEAR(r.perplexity_error(), std::sqrt(1.0 / 3.0) * std::exp(2.0), 1e-12);
  EXPECT_EQ((NllResult{1, 2.0, 4.0}).perplexity_error(), 0.0);
}

}  // namespace
}  // namespace h2o
