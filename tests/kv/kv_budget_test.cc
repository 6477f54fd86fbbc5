// Policy-at-budget expansion: each policy's split of a budget, worked out by
// hand from the paper's setup (h2o: half heavy, half recent; sink: 4 sinks).
#include "kv/kv_budget.h"

#include <gtest/gtest.h>

#include "kv/kv_spec.h"

namespace h2o {
namespace {

std::string SpecAt(std::string_view policy, std::string_view budget) {
  Result<std::string> spec = KvSpecAtBudget(policy, budget);
  EXPECT_TRUE(spec.ok()) << policy << " @ " << budget << ": " << spec.status().message();
  return spec.ok() ? spec.value() : "";
}

std::string SpecError(std::string_view policy, std::string_view budget) {
  Result<std::string> spec = KvSpecAtBudget(policy, budget);
  EXPECT_FALSE(spec.ok()) << policy << " @ " << budget << " gave " << (spec.ok() ? *spec : "");
  return spec.status().message();
}

TEST(KvBudget, SplitsEachPolicyAsThePaper) {
  EXPECT_EQ(SpecAt("h2o", "20%"), "h2o:heavy=10%,recent=10%");
  EXPECT_EQ(SpecAt("h2o", "12.5%"), "h2o:heavy=6.25%,recent=6.25%");
  EXPECT_EQ(SpecAt("h2o", "1%"), "h2o:heavy=0.5%,recent=0.5%");
  EXPECT_EQ(SpecAt("h2o", "64"), "h2o:heavy=32,recent=32");
  EXPECT_EQ(SpecAt("h2o", "65"), "h2o:heavy=32,recent=33");
  EXPECT_EQ(SpecAt("local", "4%"), "local:recent=4%");
  EXPECT_EQ(SpecAt("local", "128"), "local:recent=128");
  EXPECT_EQ(SpecAt("sink", "64"), "sink:sinks=4,recent=60");
  EXPECT_EQ(SpecAt("sink", "5"), "sink:sinks=4,recent=1");
  EXPECT_EQ(SpecAt("sink", "10%"), "sink:sinks=4,recent=10%");
  EXPECT_EQ(SpecAt("h2only", "64"), "h2only:heavy=64");
  EXPECT_EQ(SpecAt("tova", "10%"), "tova:k=10%");
  EXPECT_EQ(SpecAt("random", "64"), "random:k=64");
  EXPECT_EQ(SpecAt("snapkv", "25%"), "snapkv:budget=25%");
  EXPECT_EQ(SpecAt("full", "20%"), "full");
}

TEST(KvBudget, HalvedPercentagesResolveToHalfTheBudget) {
  // 12.5% of 512 tokens is 64: 32 heavy + 32 recent.
  Result<KvSpec> spec = ParseKvSpec(SpecAt("h2o", "12.5%"));
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const Result<KvPlan> plan = ResolveKvSpec(*spec, 512);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->heavy, 32);
  EXPECT_EQ(plan->recent, 32);
}

TEST(KvBudget, ParsesBudgets) {
  const Result<KvBudget> pct = ParseKvBudget(" 12.5% ");
  ASSERT_TRUE(pct.ok()) << pct.status().message();
  EXPECT_EQ(pct->text, "12.5%");
  EXPECT_TRUE(pct->percent);
  EXPECT_EQ(pct->value, 12.5);
  const Result<KvBudget> count = ParseKvBudget("64");
  ASSERT_TRUE(count.ok()) << count.status().message();
  EXPECT_FALSE(count->percent);
  EXPECT_EQ(count->value, 64);
}

TEST(KvBudget, RejectsBadBudgets) {
  for (const char* bad : {"", "abc", "-4", "10.5", "10%%", "%", "1e3", "4 %"}) {
    const Result<KvBudget> b = ParseKvBudget(bad);
    ASSERT_FALSE(b.ok()) << "'" << bad << "' parsed";
    EXPECT_NE(b.status().message().find("bad budget"), std::string::npos) << b.status().message();
  }
  EXPECT_NE(ParseKvBudget("0").status().message().find("above 0"), std::string::npos);
  EXPECT_NE(ParseKvBudget("0%").status().message().find("above 0"), std::string::npos);
  EXPECT_NE(ParseKvBudget("101%").status().message().find("over 100%"), std::string::npos);
  EXPECT_NE(ParseKvBudget("2147483648").status().message().find("too large"), std::string::npos);
  EXPECT_NE(SpecError("sink", "4").find("no recent window"), std::string::npos);
  EXPECT_NE(SpecError("h2o", "x").find("bad budget 'x'"), std::string::npos);
  const std::string unknown = SpecError("bogus", "10%");
  EXPECT_NE(unknown.find("unknown KV policy 'bogus'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("h2only"), std::string::npos) << unknown;
}

TEST(KvSweep, ExpandsPoliciesTimesBudgetsWithFullOnce) {
  auto grid = ExpandKvSweep("full,local,h2o,sink", "4%,10%");
  ASSERT_TRUE(grid.ok()) << grid.status().message();
  const std::vector<std::vector<std::string>> want = {
      {"full", "", "full"},
      {"local", "4%", "local:recent=4%"},
      {"local", "10%", "local:recent=10%"},
      {"h2o", "4%", "h2o:heavy=2%,recent=2%"},
      {"h2o", "10%", "h2o:heavy=5%,recent=5%"},
      {"sink", "4%", "sink:sinks=4,recent=4%"},
      {"sink", "10%", "sink:sinks=4,recent=10%"},
  };
  ASSERT_EQ(grid->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*grid)[i].policy, want[i][0]) << i;
    EXPECT_EQ((*grid)[i].budget, want[i][1]) << i;
    EXPECT_EQ((*grid)[i].spec, want[i][2]) << i;
  }
}

TEST(KvSweep, WithoutBudgetsListsTheSpecs) {
  auto grid = ExpandKvSweep("full,h2o:heavy=4,recent=4", "");
  ASSERT_TRUE(grid.ok()) << grid.status().message();
  ASSERT_EQ(grid->size(), 2u);
  EXPECT_EQ((*grid)[1].policy, "h2o");
  EXPECT_EQ((*grid)[1].budget, "");
  EXPECT_EQ((*grid)[1].spec, "h2o:heavy=4,recent=4");
}

// Parameters the split leaves alone ride along, and name their rows.
TEST(KvSweep, PoliciesKeepTheirOtherParameters) {
  auto grid = ExpandKvSweep("full,h2o:score=mean,snapkv:window=8,pyramid=20", "10%,12.5%");
  ASSERT_TRUE(grid.ok()) << grid.status().message();
  ASSERT_EQ(grid->size(), 5u);
  EXPECT_EQ((*grid)[1].policy, "h2o:score=mean");
  EXPECT_EQ((*grid)[1].spec, "h2o:heavy=5%,recent=5%,score=mean");
  EXPECT_EQ((*grid)[2].spec, "h2o:heavy=6.25%,recent=6.25%,score=mean");
  EXPECT_EQ((*grid)[3].policy, "snapkv:window=8,pyramid=20");
  EXPECT_EQ((*grid)[3].budget, "10%");
  EXPECT_EQ((*grid)[3].spec, "snapkv:budget=10%,window=8,pyramid=20");
}

TEST(KvSweep, Errors) {
  auto error = [](std::string_view kv, std::string_view budgets) {
    auto grid = ExpandKvSweep(kv, budgets);
    EXPECT_FALSE(grid.ok()) << kv << " x " << budgets;
    return grid.status().message();
  };
  EXPECT_NE(error("h2o:heavy=4,recent=4", "10%").find("'h2o:heavy=4,recent=4' sets 'heavy'"),
            std::string::npos);
  EXPECT_NE(error("sink:sinks=8", "10%").find("sets 'sinks'"), std::string::npos);
  EXPECT_NE(error("h2o:score=max", "10%").find("score"), std::string::npos);
  EXPECT_NE(error("local,bogus", "10%").find("unknown KV policy 'bogus'"), std::string::npos);
  EXPECT_NE(error("h2o", "10%,64").find("mix percentages and token counts"), std::string::npos);
  EXPECT_NE(error("h2o", "10%,,20%").find("empty budget"), std::string::npos);
  EXPECT_NE(error("h2o", "10%,x").find("bad budget 'x'"), std::string::npos);
  EXPECT_NE(error("local:heavy=1", "").find("unknown key 'heavy'"), std::string::npos);
  EXPECT_NE(error("sink", "4").find("no recent window"), std::string::npos);
  EXPECT_NE(error("full", "10%").find("need an evicting policy"), std::string::npos);
}

}  // namespace
}  // namespace h2o
