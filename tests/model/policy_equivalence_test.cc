// A policy whose budget covers the whole sequence never evicts, so its
// logits must be bit-identical to the full cache's, step by step; and the
// thread count changes no logit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

KvPlan Plan(const std::string& text) {
  auto spec = ParseKvSpec(text);
  EXPECT_TRUE(spec.ok()) << text;
  auto plan = ResolveKvSpec(*spec, std::nullopt);
  EXPECT_TRUE(plan.ok()) << text;
  return *plan;
}

TEST(PolicyEquivalence, LargeBudgetEqualsFullBitForBit) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const auto ids = testing::ReadStream("s001.txt");  // 170 tokens
  ASSERT_LT(ids.size(), 200u);
  for (const std::string spec :
       {"h2o:heavy=100,recent=100", "local:recent=200", "sink:sinks=4,recent=196", "h2only:heavy=200",
        "tova:k=200", "random:k=100,recent=100,seed=5"}) {
    for (int32_t chunk : {1, 7}) {
      SessionOptions full_options;
      full_options.max_chunk = chunk;
      SessionOptions policy_options = full_options;
      policy_options.kv = Plan(spec);
      auto full = Session::Create(**model, full_options);
      auto evicting = Session::Create(**model, policy_options);
      ASSERT_TRUE(full.ok() && evicting.ok());
      for (size_t begin = 0; begin < ids.size(); begin += chunk) {
        const size_t len = std::min<size_t>(chunk, ids.size() - begin);
        const std::span<const int32_t> part(ids.data() + begin, len);
        ASSERT_TRUE((*full)->Eval(part).ok());
        ASSERT_TRUE((*evicting)->Eval(part).ok());
        const auto a = (*full)->last_logits();
        const auto b = (*evicting)->last_logits();
        ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
            << spec << " chunk " << chunk << " at token " << begin;
      }
    }
  }
}

// With a budget below the length the policies must differ from full (the
// test above would pass trivially if eviction never ran).
TEST(PolicyEquivalence, SmallBudgetChangesLogits) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const auto ids = testing::ReadStream("s001.txt");
  SessionOptions full_options;
  full_options.max_chunk = 1;
  SessionOptions h2o_options = full_options;
  h2o_options.kv = Plan("h2o:heavy=8,recent=8");
  auto full = Session::Create(**model, full_options);
  auto h2o = Session::Create(**model, h2o_options);
  ASSERT_TRUE((*full)->Eval(ids).ok());
  ASSERT_TRUE((*h2o)->Eval(ids).ok());
  const auto a = (*full)->last_logits();
  const auto b = (*h2o)->last_logits();
  EXPECT_NE(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  EXPECT_EQ((*h2o)->cache().count(0, 0), 16);
}

// Threads split rows and heads, never one dot product, so the thread count
// must not change a single bit of the logits: prompt (chunked) and decode,
// with an evicting policy whose choices would amplify any difference.
TEST(PolicyEquivalence, ThreadCountDoesNotChangeTheLogits) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const auto ids = testing::ReadStream("s001.txt");
  for (const std::string spec : {"full", "h2o:heavy=16,recent=16"}) {
    std::vector<std::vector<float>> by_threads;
    for (int32_t threads : {1, 2, 3, 4}) {
      SessionOptions options;
      options.max_chunk = 32;
      options.n_threads = threads;
      options.kv = Plan(spec);
      auto session = Session::Create(**model, options);
      ASSERT_TRUE(session.ok());
      std::vector<float> logits;
      for (size_t begin = 0; begin < ids.size(); begin += 40) {
        const size_t len = std::min<size_t>(40, ids.size() - begin);
        ASSERT_TRUE((*session)->Eval(std::span<const int32_t>(ids.data() + begin, len)).ok());
        const auto last = (*session)->last_logits();
        logits.insert(logits.end(), last.begin(), last.end());
      }
      by_threads.push_back(std::move(logits));
    }
    for (size_t t = 1; t < by_threads.size(); ++t) {
      EXPECT_EQ(0, std::memcmp(by_threads[0].data(), by_threads[t].data(), by_threads[0].size() * sizeof(float)))
          << spec << ": " << t + 1 << " threads differ from 1";
    }
  }
}

}  // namespace
}  // namespace h2o
