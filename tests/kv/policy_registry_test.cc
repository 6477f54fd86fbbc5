// The registry's contract: every policy is reachable by its name, and what
// each descriptor builds agrees with what it describes and resolves to.
#include "kv/policy_registry.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "kv/kv_budget.h"
#include "kv/kv_spec.h"

namespace h2o {
namespace {

TEST(PolicyRegistryTest, NamesAreUniqueAndFound) {
  std::set<std::string> names;
  for (const PolicyDescriptor* p : Policies()) {
    EXPECT_TRUE(names.insert(p->name).second) << p->name;
    EXPECT_EQ(FindPolicy(p->name), p);
    EXPECT_NE(p->describe, nullptr) << p->name;
    EXPECT_NE(p->make, nullptr) << p->name;
  }
  EXPECT_EQ(FindPolicy("bogus"), nullptr);
  EXPECT_EQ(FindPolicy(""), nullptr);
  // DESIGN.md section 3's policies and the ones added since, in help's order.
  EXPECT_EQ(PolicyNames(), "full, local, sink, h2o, h2only, tova, random, snapkv");
}

TEST(PolicyRegistryTest, OnlyFullKeepsEverything) {
  for (const PolicyDescriptor* p : Policies()) {
    EXPECT_EQ(p->evicts, std::string(p->name) != "full") << p->name;
    EXPECT_EQ(p->evicts, p->split.kind != BudgetSplit::Kind::kNone) << p->name;
  }
}

// Each policy at a 40-token budget: the policy built from the resolved
// plan has the descriptor's name and the plan's budget, and the plan's
// description parses back to the same plan.
TEST(PolicyRegistryTest, BuildsWhatItDescribes) {
  for (const PolicyDescriptor* p : Policies()) {
    SCOPED_TRACE(p->name);
    Result<std::string> text = KvSpecAtBudget(p->name, "40");
    ASSERT_TRUE(text.ok()) << text.status().message();
    Result<KvSpec> spec = ParseKvSpec(*text);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    Result<KvPlan> plan = ResolveKvSpec(*spec, std::nullopt);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    const auto policy = MakePolicy(*plan, 100);
    EXPECT_EQ(policy->name(), p->name);
    EXPECT_EQ(policy->budget(), p->evicts ? 40 : 100);
    Result<KvSpec> again = ParseKvSpec(plan->Describe());
    ASSERT_TRUE(again.ok()) << again.status().message();
    Result<KvPlan> replan = ResolveKvSpec(*again, std::nullopt);
    ASSERT_TRUE(replan.ok());
    EXPECT_EQ(replan->Describe(), plan->Describe());
  }
}

TEST(PolicyRegistryTest, PosShiftNamesThePoliciesItAppliesTo) {
  EXPECT_TRUE(CheckPosShift("sink").ok());
  EXPECT_TRUE(CheckPosShift("h2o").ok());
  const Status tova = CheckPosShift("tova");
  ASSERT_FALSE(tova.ok());
  EXPECT_EQ(tova.message(), "--kv-pos-shift applies to the sink and h2o policies, not 'tova'");
  EXPECT_FALSE(CheckPosShift("bogus").ok());
}

TEST(PolicyRegistryTest, PyramidScalesOnlyWhereThePolicyHasTheKey) {
  for (const PolicyDescriptor* p : Policies()) {
    bool has_pyramid = false;
    for (const KvKey& k : p->keys) has_pyramid = has_pyramid || std::string(k.name) == "pyramid";
    EXPECT_EQ(has_pyramid, p->pyramid_fixed != nullptr) << p->name;
  }
}

}  // namespace
}  // namespace h2o
