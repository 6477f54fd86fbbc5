#include "server/completion_plan.h"

#include <gtest/gtest.h>

namespace h2o::server {
namespace {

KvSpec Full() { return ParseKvSpec("full").value(); }

TEST(PlanCompletion, UnsetMaxTokensTakesTheRestOfTheContextUpToTheDefault) {
  CompletionParams params;
  CompletionPlan run;
  ASSERT_FALSE(PlanCompletion(params, 10, 100, Full(), 2048, run));
  EXPECT_EQ(run.max_tokens, 90);
  ASSERT_FALSE(PlanCompletion(params, 10, 100, Full(), 32, run));
  EXPECT_EQ(run.max_tokens, 32);
  EXPECT_EQ(run.kv.Describe(), "full");
}

TEST(PlanCompletion, AContextOverflowNamesTheFieldThatCausedIt) {
  CompletionParams params;
  CompletionPlan run;
  auto e = PlanCompletion(params, 100, 100, Full(), 2048, run);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->param, "prompt");
  EXPECT_EQ(e->code, "context_length_exceeded");
  EXPECT_EQ(e->message, "100 prompt tokens + 1 to generate exceed the context of 100 tokens");
  params.max_tokens = 60;
  e = PlanCompletion(params, 50, 100, Full(), 2048, run);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "max_tokens");
  params.max_tokens = 50;
  EXPECT_FALSE(PlanCompletion(params, 50, 100, Full(), 2048, run));
}

// Percentages resolve against the server's context (10% of 1000 tokens),
// whatever the request's length, so a conversation's turns share a budget.
TEST(PlanCompletion, TheRequestsKvResolvesAgainstTheContext) {
  CompletionParams params;
  params.kv = "h2o:heavy=10%,recent=10%";
  params.max_tokens = 60;
  CompletionPlan run;
  ASSERT_FALSE(PlanCompletion(params, 40, 1000, Full(), 2048, run));
  EXPECT_EQ(run.kv.Describe(), "h2o:heavy=100,recent=100");
  params.max_tokens = 500;
  ASSERT_FALSE(PlanCompletion(params, 400, 1000, Full(), 2048, run));
  EXPECT_EQ(run.kv.Describe(), "h2o:heavy=100,recent=100");
  params.kv = "bogus:k=1";
  auto e = PlanCompletion(params, 40, 1000, Full(), 2048, run);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "kv");
  EXPECT_NE(e->message.find("unknown KV policy 'bogus'"), std::string::npos);
}

}  // namespace
}  // namespace h2o::server
