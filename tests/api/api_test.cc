// The public interface (include/h2o) against the independent references in
// tests/data: greedy ids and per-token NLL of stories260K, computed outside
// this engine, and the C interface's error codes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "h2o/h2o.h"
#include "h2o/h2o.hpp"
#include "test_data.h"

namespace {

class PublicApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = new h2o::Model(h2o::Model::Load(h2o::testing::ModelPath())); }
  static void TearDownTestSuite() { delete model_; }
  static h2o::Model* model_;
};
h2o::Model* PublicApi::model_ = nullptr;

TEST_F(PublicApi, GreedyIdsEqualTheReferenceUnderEveryPolicy) {
  int checked = 0;
  for (const auto& c : h2o::testing::ReadJson("stories260K/reference_greedy.json")) {
    h2o::SessionParams params;
    params.kv = h2o::testing::ReferenceKvSpec(c);
    params.n_threads = 2;
    // One token a pass: the cache then has one slot beyond its budget (a
    // chunk of n_ctx would add n_ctx slots, more than these runs fill).
    params.max_chunk = 1;
    h2o::Session session(*model_, params);
    const auto prompt = c["prompt"].get<std::vector<int32_t>>();
    h2o::GenerateParams gen;
    gen.max_tokens = c["n_predict"];
    gen.stop_at_eog = false;
    std::vector<int32_t> got = prompt;
    for (int32_t id : session.Generate(prompt, gen)) got.push_back(id);
    EXPECT_EQ(got, c["expected_ids"].get<std::vector<int32_t>>()) << params.kv;
    const h2o::KvStats kv = session.kv_stats();
    EXPECT_EQ(kv.policy.substr(0, c["policy"].get<std::string>().size()), c["policy"]);
    // What a (layer, head) holds: every position fed but the last (sampled,
    // never fed), or the budget once it is passed.
    const int32_t fed = static_cast<int32_t>(got.size()) - 1;
    EXPECT_EQ(session.n_past(), fed);
    if (c["policy"] == "full") {
      EXPECT_EQ(kv.max_head_kept, fed);
    } else {
      EXPECT_EQ(kv.max_head_kept, std::min(fed, kv.budget)) << params.kv;
      EXPECT_LT(kv.allocated_bytes, kv.full_cache_bytes) << params.kv;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

TEST_F(PublicApi, PerTokenNllEqualsTheReference) {
  const nlohmann::json full = h2o::testing::ReadJson("stories260K/reference_nll.json")[0];
  ASSERT_EQ(full["policy"], "full");
  h2o::SessionParams params;
  params.n_ctx = 512;
  params.n_threads = 2;
  params.max_chunk = 64;
  h2o::Session session(*model_, params);
  for (int i = 0; i < 3; ++i) {
    const auto& s = full["per_stream"][i];
    const std::vector<int32_t> ids = h2o::testing::ReadStream(s["stream"]);
    session.Reset();
    const std::vector<double> nll = session.Score(ids);
    ASSERT_EQ(static_cast<int64_t>(nll.size()), s["tokens"].get<int64_t>());
    double sum = 0;
    for (double x : nll) sum += x;
    EXPECT_NEAR(sum, s["nll_sum"].get<double>(), 1e-3 * s["nll_sum"].get<double>()) << s["stream"];
  }
}

TEST_F(PublicApi, TokenizeAndDetokenizeRoundTrip) {
  const std::vector<int32_t> ids = model_->Tokenize("Once upon a time");
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);  // the bundled vocabulary adds BOS
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + 3), (std::vector<int32_t>{1, 403, 407}));
  EXPECT_EQ(model_->Detokenize(ids), "Once upon a time");
  // Too small a buffer: minus what is needed, as llama_tokenize.
  int32_t one[1];
  EXPECT_EQ(h2o_tokenize(model_->get(), "Once upon a time", 16, one, 1, true),
            -static_cast<int32_t>(ids.size()));
}

TEST_F(PublicApi, ErrorsAreCodesWithOneLineMessages) {
  h2o_model* m = nullptr;
  EXPECT_EQ(h2o_model_load("/nonexistent/model.gguf", nullptr, &m), H2O_ERR_LOAD);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(h2o_last_error()).find("/nonexistent/model.gguf"), std::string::npos);
  EXPECT_EQ(h2o_model_load(nullptr, nullptr, &m), H2O_ERR_INVALID_ARGUMENT);

  h2o_session_params p = h2o_session_default_params();
  p.kv = "h2o:heavy=10%,recent=10%";  // percentages without prompt_len
  h2o_session* s = nullptr;
  EXPECT_EQ(h2o_session_create(model_->get(), &p, &s), H2O_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(std::string(h2o_last_error()).find("kv"), std::string::npos) << h2o_last_error();
  p.kv = "bogus:k=1";
  EXPECT_EQ(h2o_session_create(model_->get(), &p, &s), H2O_ERR_INVALID_ARGUMENT);
  p.kv = "h2o:heavy=10%,recent=10%";
  p.prompt_len = 100;
  p.kv_type_k = "q9_9";
  EXPECT_EQ(h2o_session_create(model_->get(), &p, &s), H2O_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(h2o_last_error()).find("kv_type_k"), std::string::npos) << h2o_last_error();
  p.kv_type_k = nullptr;
  p.n_ctx = 8;
  ASSERT_EQ(h2o_session_create(model_->get(), &p, &s), H2O_OK);
  const int32_t bad[] = {1, 100000};
  EXPECT_EQ(h2o_session_eval(s, bad, 2, false), H2O_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(h2o_session_n_past(s), 0);  // nothing fed
  const int32_t nine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(h2o_session_eval(s, nine, 9, false), H2O_ERR_CONTEXT_FULL);
  EXPECT_EQ(h2o_session_n_past(s), 0);
  EXPECT_EQ(h2o_session_eval(s, nine, 8, false), H2O_OK);
  EXPECT_NE(h2o_session_logits(s, -1), nullptr);
  EXPECT_EQ(h2o_session_logits(s, 1), nullptr);  // only the last row was asked for
  int32_t out[4];
  int32_t n = -1;
  EXPECT_EQ(h2o_generate(s, nine, 4, nullptr, out, 4, &n), H2O_ERR_CONTEXT_FULL);  // 4 + 128 > 8
  h2o_generate_params g = h2o_generate_default_params();
  g.max_tokens = 4;
  g.stop_at_eog = false;
  EXPECT_EQ(h2o_generate(s, nine, 4, &g, out, 2, &n), H2O_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, 4);
  h2o_session_free(s);
  h2o_session_free(nullptr);
  h2o_model_free(nullptr);

  try {
    h2o::SessionParams bad_params;
    bad_params.kv = "h2o:heavy=x";
    h2o::Session session(*model_, bad_params);
    ADD_FAILURE() << "no error";
  } catch (const h2o::Error& e) {
    EXPECT_EQ(e.code(), H2O_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST_F(PublicApi, SamplerMatchesGreedyAtTemperatureZero) {
  h2o::Session session(*model_, {});
  const std::vector<int32_t> prompt = {1, 403, 407};
  session.Eval(prompt);
  h2o::Sampler greedy;
  const std::span<const float> logits = session.Logits();
  int32_t best = 0;
  for (int32_t i = 1; i < static_cast<int32_t>(logits.size()); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  EXPECT_EQ(session.Sample(greedy), best);
}

}  // namespace
