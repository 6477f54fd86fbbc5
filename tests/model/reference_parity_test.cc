// The engine against values computed by an independent implementation
// (tests/data/stories260K, see its README): greedy continuations and
// per-stream NLL with the full cache.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/perplexity.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "greedy.h"
#include "test_data.h"

namespace h2o {
namespace {

class ReferenceParity : public ::testing::TestWithParam<TensorType> {
 protected:
  static void SetUpTestSuite() {
    auto m = Model::Load(testing::ModelPath());
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::move(m).value().release();
  }
  static void TearDownTestSuite() { delete model_; }
  static Model* model_;
};
Model* ReferenceParity::model_ = nullptr;

TEST_P(ReferenceParity, FullCacheGreedyIdsMatchExactly) {
  int checked = 0;
  for (const auto& c : testing::ReadJson("stories260K/reference_greedy.json")) {
    if (c["policy"] != "full") continue;
    SessionOptions o;
    o.kv_types = {GetParam(), GetParam()};
    auto session = Session::Create(*model_, o);
    ASSERT_TRUE(session.ok());
    const auto expected = c["expected_ids"].get<std::vector<int32_t>>();
    const auto got = testing::GreedyContinue(**session, c["prompt"].get<std::vector<int32_t>>(), c["n_predict"]);
    EXPECT_EQ(got, expected) << "prompt " << c["prompt"].dump();
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST_P(ReferenceParity, FullCacheNllOfEveryStreamWithinTenthOfAPercent) {
  const nlohmann::json all = testing::ReadJson("stories260K/reference_nll.json");
  const nlohmann::json& full = all[0];
  ASSERT_EQ(full["policy"], "full");
  SessionOptions o;
  o.kv_types = {GetParam(), GetParam()};
  o.n_ctx = 512;
  o.max_chunk = 1;
  auto session = Session::Create(*model_, o);
  ASSERT_TRUE(session.ok());
  double total = 0.0;
  for (const auto& s : full["per_stream"]) {
    const auto ids = testing::ReadStream(s["stream"]);
    auto r = ScoreStream(**session, ids);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->tokens, s["tokens"].get<int64_t>());
    const double ref = s["nll_sum"];
    EXPECT_NEAR(r->nll_sum, ref, 1e-3 * ref) << s["stream"];
    total += r->nll_sum;
  }
  EXPECT_NEAR(total, full["nll_sum"].get<double>(), 1e-3 * full["nll_sum"].get<double>());
}

// A chunked prefill must give the same logits as feeding one token at a time,
// up to rounding: the two paths sum in different orders (batched GEMM vs
// per-token dot), and with f16 K/V an element near a rounding boundary can
// land one f16 ulp (2^-11 relative) away, which the logits carry through.
TEST_P(ReferenceParity, ChunkedPrefillEqualsTokenByToken) {
  const auto ids = testing::ReadStream("s001.txt");
  const std::span<const int32_t> prompt(ids.data(), 64);
  SessionOptions whole;
  whole.kv_types = {GetParam(), GetParam()};
  auto a = Session::Create(*model_, whole);
  SessionOptions single = whole;
  single.max_chunk = 1;
  auto b = Session::Create(*model_, single);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Eval(prompt).ok());
  ASSERT_TRUE((*b)->Eval(prompt).ok());
  const auto la = (*a)->last_logits();
  const auto lb = (*b)->last_logits();
  const float f16_ulp = 1.0f / 2048;
  for (size_t i = 0; i < la.size(); ++i) {
    const float tolerance = GetParam() == TensorType::kF32
                                ? 1e-4f
                                : 2 * f16_ulp * std::max(1.0f, std::abs(la[i]));
    EXPECT_NEAR(la[i], lb[i], tolerance) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(KvTypes, ReferenceParity,
                         ::testing::Values(TensorType::kF32, TensorType::kF16),
                         [](const auto& info) {
                           return std::string(TraitsOf(info.param).name);
                         });

}  // namespace
}  // namespace h2o
