#include "server/completion_plan.h"

#include <gtest/gtest.h>

namespace h2o::server {
namespace {

KvSpec Full() { return ParseKvSpec("full").value(); }

TEST(PlanCompletion, UnsetMaxTokensTakesTheRestOfTheContextUpToTheDefault) {
  CompletionParams params;
  CompletionPlan run;
  ASSERT_FALSE(PlanCompletion(params, 10, 100, Full(), 2048, {}, run));
  EXPECT_EQ(run.max_tokens, 90);
  ASSERT_FALSE(PlanCompletion(params, 10, 100, Full(), 32, {}, run));
  EXPECT_EQ(run.max_tokens, 32);
  EXPECT_EQ(run.kv.Describe(), "full");
}

TEST(PlanCompletion, AContextOverflowNamesTheFieldThatCausedIt) {
  CompletionParams params;
  CompletionPlan run;
  auto e = PlanCompletion(params, 100, 100, Full(), 2048, {}, run);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->param, "prompt");
  EXPECT_EQ(e->code, "context_length_exceeded");
  EXPECT_EQ(e->message, "100 prompt tokens + 1 to generate exceed the context of 100 tokens");
  params.max_tokens = 60;
  e = PlanCompletion(params, 50, 100, Full(), 2048, {}, run);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "max_tokens");
  params.max_tokens = 50;
  EXPECT_FALSE(PlanCompletion(params, 50, 100, Full(), 2048, {}, run));
}

// Percentages resolve against the server's context (10% of 1000 tokens),
// whatever the request's length, so a conversation's turns share a budget.
TEST(PlanCompletion, TheRequestsKvResolvesAgainstTheContext) {
  CompletionParams params;
  params.kv = "h2o:heavy=10%,recent=10%";
  params.max_tokens = 60;
  CompletionPlan run;
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, {}, run));
  EXPECT_EQ(run.kv.Describe(), "h2o:heavy=100,recent=100");
  params.max_tokens = 500;
  ASSERT_FALSE(PlanCompletion(params, 400, 1000, Full(), 2048, {}, run));
  EXPECT_EQ(run.kv.Describe(), "h2o:heavy=100,recent=100");
  params.kv = "bogus:k=1";
  auto e = PlanCompletion(params, 40, 1000, Full(), 2048, {}, run);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "kv");
  EXPECT_NE(e->message.find("unknown KV policy 'bogus'"), std::string::npos);
}

// n_keep pins first tokens on top of the budget: -1 is what the server
// says (the system prompt, the whole prompt), the server's --kv-keep is
// the default, and more than the prompt or the budget is a 400 naming it.
TEST(PlanCompletion, NKeepPinsOnTopOfTheBudgetOrSaysWhyNot) {
  CompletionParams params;
  params.kv = "h2o:heavy=8,recent=8";
  params.max_tokens = 10;
  CompletionPlan run;
  params.n_keep = 5;
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, {}, run));
  EXPECT_EQ(run.kv.Describe(), "h2o:heavy=8,recent=8,keep=5");
  EXPECT_EQ(run.kv.budget, 16);
  params.n_keep = -1;
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, {.keep_all = 12}, run));
  EXPECT_EQ(run.kv.keep, 12);
  params.n_keep.reset();
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, {.default_keep = 3}, run));
  EXPECT_EQ(run.kv.keep, 3);
  params.n_keep = 0;  // the request's own 0 beats the server's default
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, {.default_keep = 3}, run));
  EXPECT_EQ(run.kv.keep, 0);

  const auto refused = [&](int64_t n_keep, int64_t n_prompt, const char* says) {
    params.n_keep = n_keep;
    auto e = PlanCompletion(params, n_prompt, 1000, Full(), 2048, {.keep_all = 900}, run);
    ASSERT_TRUE(e) << n_keep;
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, "n_keep");
    EXPECT_NE(e->message.find(says), std::string::npos) << e->message;
  };
  refused(41, 40, "more than the prompt's 40 tokens");
  refused(-1, 40, "more than the prompt's 40 tokens");
  refused(17, 400, "more tokens than the policy's budget of 16");
  params.kv = "h2o:heavy=8,recent=8,keep=2";
  refused(4, 40, "give one of them");

  // Under full nothing is evicted, so nothing needs pinning.
  params.kv = "full";
  params.n_keep = 30;
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, {}, run));
  EXPECT_EQ(run.kv.Describe(), "full");
}

}  // namespace
}  // namespace h2o::server
