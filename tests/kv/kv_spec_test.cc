// --kv parsing and resolving: each valid form gives the right absolute
// numbers and policy; each malformed form gives its one-line error.
#include "kv/kv_spec.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kv/policies.h"
#include "kv/snapkv.h"

namespace h2o {
namespace {

KvPlan MustResolve(const std::string& text, std::optional<int64_t> prompt_len) {
  const Result<KvSpec> spec = ParseKvSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status().message();
  if (!spec.ok()) return {};
  const Result<KvPlan> plan = ResolveKvSpec(spec.value(), prompt_len);
  EXPECT_TRUE(plan.ok()) << text << ": " << plan.status().message();
  return plan.ok() ? plan.value() : KvPlan{};
}

std::string ParseError(const std::string& text) {
  const Result<KvSpec> spec = ParseKvSpec(text);
  EXPECT_FALSE(spec.ok()) << "'" << text << "' parsed";
  return spec.status().message();
}

std::string ResolveError(const std::string& text, std::optional<int64_t> prompt_len) {
  const Result<KvSpec> spec = ParseKvSpec(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << spec.status().message();
  if (!spec.ok()) return "";
  const Result<KvPlan> plan = ResolveKvSpec(spec.value(), prompt_len);
  EXPECT_FALSE(plan.ok()) << "'" << text << "' resolved";
  return plan.status().message();
}

TEST(KvSpec, ParsesPolicyAndParamsAsGiven) {
  const Result<KvSpec> spec = ParseKvSpec("h2o:heavy=12.5%,recent=64");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->text, "h2o:heavy=12.5%,recent=64");
  EXPECT_EQ(spec->policy, "h2o");
  ASSERT_EQ(spec->params.size(), 2u);
  EXPECT_TRUE(spec->params.at("heavy").percent);
  EXPECT_EQ(spec->params.at("heavy").value, 12.5);
  EXPECT_FALSE(spec->params.at("recent").percent);
  EXPECT_EQ(spec->params.at("recent").value, 64);
  EXPECT_TRUE(KvSpecUsesPercent(spec.value()));
  EXPECT_FALSE(KvSpecUsesPercent(ParseKvSpec("h2o:heavy=1,recent=2").value()));
  EXPECT_TRUE(ParseKvSpec("sink:recent=8").value().params.size() == 1);  // defaults not filled
}

TEST(KvSpec, ResolvesThePapersTwentyPercentBudget) {
  const KvPlan plan = MustResolve("h2o:heavy=10%,recent=10%", 512);
  EXPECT_EQ(plan.policy, "h2o");
  EXPECT_EQ(plan.heavy, 51);
  EXPECT_EQ(plan.recent, 51);
  EXPECT_EQ(plan.budget, 102);
  EXPECT_EQ(plan.Describe(), "h2o:heavy=51,recent=51");
}

// A policy named without a budget gets 20% of the sequence, split as a
// --budget sweep splits it; the expected plans are the split's arithmetic
// (kv_budget.h's table) worked by hand for a 200-token sequence.
TEST(KvSpec, APolicyWithoutABudgetGetsTwentyPercent) {
  EXPECT_EQ(MustResolve("h2o", 200).Describe(), "h2o:heavy=20,recent=20");
  EXPECT_EQ(MustResolve("local", 200).Describe(), MustResolve("local:recent=40", 0).Describe());
  const KvPlan sink = MustResolve("sink", 200);
  EXPECT_EQ(sink.sinks, 4);  // its own default, on top (a percentage cannot absorb a count)
  EXPECT_EQ(sink.recent, 40);
  EXPECT_EQ(MustResolve("sink:sinks=8", 200).recent, 40);
  EXPECT_EQ(MustResolve("h2only", 200).heavy, 40);
  EXPECT_EQ(MustResolve("tova", 200).k, 40);
  const KvPlan random = MustResolve("random:seed=3", 200);
  EXPECT_EQ(random.k, 40);
  EXPECT_EQ(random.recent, 0);
  const KvPlan snap = MustResolve("snapkv:window=8", 200);
  EXPECT_EQ(snap.k, 40);
  EXPECT_EQ(snap.window, 8);
  const KvPlan mean = MustResolve("h2o:score=mean,keep=2", 200);
  EXPECT_EQ(mean.heavy + mean.recent, 40);
  EXPECT_EQ(mean.score, "mean");
  EXPECT_EQ(mean.keep, 2);
  // Part of a budget is not completed, and full has none.
  EXPECT_EQ(ParseError("h2o:heavy=10"), "missing key 'recent' for policy 'h2o'");
  EXPECT_EQ(MustResolve("random:recent=4", 200).k, 40);  // recent is not random's split
  EXPECT_TRUE(ParseKvSpec("full").value().params.empty());
  // The default is a percentage: it needs the sequence's length.
  EXPECT_EQ(ResolveError("tova", std::nullopt),
            "percentage budgets need a sequence length (KV spec 'tova')");
}

TEST(KvSpec, ResolvesEveryPolicy) {
  KvPlan p = MustResolve("full", std::nullopt);
  EXPECT_EQ(p.policy, "full");
  EXPECT_EQ(p.budget, 0);
  EXPECT_EQ(p.Describe(), "full");

  p = MustResolve("local:recent=256", std::nullopt);
  EXPECT_EQ(p.recent, 256);
  EXPECT_EQ(p.budget, 256);
  EXPECT_EQ(p.Describe(), "local:recent=256");

  p = MustResolve("sink:sinks=4,recent=508", std::nullopt);
  EXPECT_EQ(p.sinks, 4);
  EXPECT_EQ(p.recent, 508);
  EXPECT_EQ(p.budget, 512);
  EXPECT_EQ(p.Describe(), "sink:sinks=4,recent=508");

  p = MustResolve("sink:recent=60", std::nullopt);  // sinks defaults to 4
  EXPECT_EQ(p.sinks, 4);
  EXPECT_EQ(p.budget, 64);

  p = MustResolve("h2o:heavy=64,recent=32", std::nullopt);
  EXPECT_EQ(p.budget, 96);

  p = MustResolve("h2o:recent=0,heavy=5", std::nullopt);  // any key order
  EXPECT_EQ(p.heavy, 5);
  EXPECT_EQ(p.recent, 0);
  EXPECT_EQ(p.budget, 5);

  p = MustResolve("h2only:heavy=20%", 100);
  EXPECT_EQ(p.heavy, 20);
  EXPECT_EQ(p.budget, 20);
  EXPECT_EQ(p.Describe(), "h2only:heavy=20");

  p = MustResolve("tova:k=33", std::nullopt);
  EXPECT_EQ(p.k, 33);
  EXPECT_EQ(p.budget, 33);
  EXPECT_EQ(p.Describe(), "tova:k=33");

  p = MustResolve("random:k=10", std::nullopt);  // recent and seed default to 0
  EXPECT_EQ(p.k, 10);
  EXPECT_EQ(p.recent, 0);
  EXPECT_EQ(p.seed, 0u);
  EXPECT_EQ(p.budget, 10);
  EXPECT_EQ(p.Describe(), "random:k=10,recent=0,seed=0");

  // Seeds keep all 64 bits (a double would round this one).
  p = MustResolve("random:k=10%,recent=5,seed=18446744073709551615", 200);
  EXPECT_EQ(p.k, 20);
  EXPECT_EQ(p.recent, 5);
  EXPECT_EQ(p.seed, 18446744073709551615ull);
  EXPECT_EQ(p.budget, 25);
}

TEST(KvSpec, PercentagesFloorExactly) {
  // Decimal arithmetic, not binary: 0.29 * 100 is 28.999... in doubles.
  EXPECT_EQ(MustResolve("h2only:heavy=29%", 100).heavy, 29);
  EXPECT_EQ(MustResolve("h2only:heavy=12.5%", 8).heavy, 1);
  EXPECT_EQ(MustResolve("h2o:heavy=12.5%,recent=7%", 1000).budget, 125 + 70);
  EXPECT_EQ(MustResolve("h2only:heavy=100%", 4096).heavy, 4096);
  EXPECT_EQ(MustResolve("h2o:heavy=0.1%,recent=1", 999).heavy, 0);
  EXPECT_EQ(MustResolve("h2only:heavy=0.1%", 1000).heavy, 1);
  EXPECT_EQ(MustResolve("h2only:heavy=33.333%", 3000).heavy, 999);
  EXPECT_EQ(MustResolve("h2only:heavy=007", std::nullopt).heavy, 7);
}

TEST(KvSpec, MakePolicyBuildsThePlansPolicy) {
  const struct {
    const char* text;
    const char* name;
    int32_t budget;
  } cases[] = {{"full", "full", 2048},
               {"local:recent=16", "local", 16},
               {"sink:sinks=2,recent=16", "sink", 18},
               {"h2o:heavy=10%,recent=10%", "h2o", 102},
               {"h2only:heavy=9", "h2only", 9},
               {"tova:k=12", "tova", 12},
               {"random:k=3,recent=4,seed=9", "random", 7}};
  for (const auto& c : cases) {
    const KvPlan plan = MustResolve(c.text, 512);
    const std::unique_ptr<EvictionPolicy> policy = MakePolicy(plan, 2048);
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->name(), c.name);
    EXPECT_EQ(policy->budget(), c.budget) << c.text;
    if (plan.policy != "full") {
      EXPECT_EQ(policy->budget(), plan.budget) << c.text;
    }
  }
}

TEST(KvSpec, ParseErrors) {
  EXPECT_EQ(ParseError(""),
            "empty KV spec (expected POLICY[:key=value,...], e.g. h2o:heavy=10%,recent=10%)");
  EXPECT_EQ(ParseError("h3o:heavy=1,recent=1"),
            "unknown KV policy 'h3o' (expected one of: full, local, sink, h2o, h2only, tova, "
            "random, snapkv)");
  EXPECT_EQ(ParseError("H2O:heavy=1,recent=1").substr(0, 22), "unknown KV policy 'H2O");
  EXPECT_EQ(ParseError(":recent=1").substr(0, 21), "unknown KV policy '' ");
  EXPECT_EQ(ParseError("local:heavy=3"), "unknown key 'heavy' for policy 'local' (valid: recent, keep)");
  EXPECT_EQ(ParseError("random:k=1,seeds=2"),
            "unknown key 'seeds' for policy 'random' (valid: k, recent, seed, keep)");
  EXPECT_EQ(ParseError("full:recent=3"),
            "unknown key 'recent' for policy 'full' (it takes no parameters)");
  EXPECT_EQ(ParseError("h2o:heavy=10"), "missing key 'recent' for policy 'h2o'");
  EXPECT_EQ(ParseError("h2o:recent=10"), "missing key 'heavy' for policy 'h2o'");
  EXPECT_EQ(ParseError("tova:"), "nothing after ':' in KV spec 'tova:' (expected key=value pairs)");
  EXPECT_EQ(ParseError("h2o:heavy=-3,recent=1"),
            "bad value '-3' for 'heavy': expected a non-negative integer or a percentage like 10%");
  for (const char* bad : {"+3", "3.5", "1e3", "%", "10%%", ".5%", "5.%", "0x10", " 3", "3 ", "",
                          "ten", "10 %", "1,5%"}) {
    const std::string text = std::string("h2only:heavy=") + bad;
    if (std::string(bad) == "1,5%") {
      EXPECT_EQ(ParseError(text), "key without '=' in KV spec '" + text + "': '5%' (expected key=value)");
      continue;
    }
    EXPECT_EQ(ParseError(text), "bad value '" + std::string(bad) +
                                    "' for 'heavy': expected a non-negative integer or a "
                                    "percentage like 10%")
        << text;
  }
  EXPECT_EQ(ParseError("random:k=1,seed=10%"),
            "bad value '10%' for 'seed': expected a non-negative integer");
  EXPECT_EQ(ParseError("random:k=1,seed=-1"),
            "bad value '-1' for 'seed': expected a non-negative integer");
  EXPECT_EQ(ParseError("h2o:heavy=1,heavy=2,recent=1"),
            "duplicate key 'heavy' in KV spec 'h2o:heavy=1,heavy=2,recent=1'");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,"),
            "trailing comma in KV spec 'h2o:heavy=1,recent=1,'");
  EXPECT_EQ(ParseError("h2o:heavy=1,,recent=1"),
            "empty parameter in KV spec 'h2o:heavy=1,,recent=1'");
  EXPECT_EQ(ParseError("h2o:heavy,recent=1"),
            "key without '=' in KV spec 'h2o:heavy,recent=1': 'heavy' (expected key=value)");
  EXPECT_EQ(ParseError("h2o:=1,recent=1"), "missing key before '=' in KV spec 'h2o:=1,recent=1'");
  EXPECT_EQ(ParseError("h2only:heavy=2147483648"),
            "value '2147483648' for 'heavy' is too large (at most 2147483647)");
  EXPECT_EQ(ParseError("h2only:heavy=99999999999999999999999"),
            "value '99999999999999999999999' for 'heavy' is too large");
  EXPECT_EQ(ParseError("random:k=1,seed=18446744073709551616"),
            "value '18446744073709551616' for 'seed' is too large");
  EXPECT_TRUE(ParseKvSpec("h2only:heavy=2147483647").ok());
}

TEST(KvSpec, ResolveErrors) {
  EXPECT_EQ(ResolveError("h2o:heavy=10%,recent=10%", std::nullopt),
            "percentage budgets need a sequence length (KV spec 'h2o:heavy=10%,recent=10%')");
  EXPECT_EQ(ResolveError("h2o:heavy=0,recent=0", std::nullopt),
            "KV budget must be at least 1 token (h2o:heavy=0,recent=0 gives 0)");
  EXPECT_EQ(ResolveError("h2o:heavy=10%,recent=10%", 5),
            "KV budget must be at least 1 token (h2o:heavy=10%,recent=10% gives 0 for a 5-token "
            "sequence)");
  EXPECT_EQ(ResolveError("local:recent=0", 100),
            "KV budget must be at least 1 token (local:recent=0 gives 0)");
  EXPECT_EQ(ResolveError("sink:sinks=4,recent=0", 100),
            "sink needs recent >= 1 (sink:sinks=4,recent=0 gives recent=0)");
  EXPECT_EQ(ResolveError("h2o:heavy=2147483647,recent=1", std::nullopt),
            "KV budget must be at most 2147483647 tokens (h2o:heavy=2147483647,recent=1 gives "
            "2147483648)");
  EXPECT_EQ(ResolveError("h2only:heavy=200%", 2000000000),
            "'heavy' resolves to more than 2147483647 tokens");
  EXPECT_EQ(ResolveError("tova:k=1", -1), "prompt length must be non-negative (got -1)");

  // Hand-built specs are re-validated.
  KvSpec spec;
  spec.policy = "nope";
  EXPECT_FALSE(ResolveKvSpec(spec, 10).ok());
  spec.policy = "h2o";
  spec.params["heavy"] = {.value = 1, .percent = false, .digits = 1, .scale = 0, .word = ""};
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(), "missing key 'recent' for policy 'h2o'");
  spec.params["sinks"] = {};
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(),
            "unknown key 'sinks' for policy 'h2o' (valid: heavy, recent, score, decay, pyramid, keep)");
  // A word where a number goes, a number where a word goes, a word not on
  // the list, a decay out of range or without ema.
  spec.params.erase("sinks");
  spec.params["recent"] = spec.params["heavy"];
  spec.params["score"] = {};
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(),
            "bad value for 'score': expected one of sum, mean, ema");
  spec.params["score"].word = "max";
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(),
            "bad value 'max' for 'score': expected one of sum, mean, ema");
  spec.params["score"].word = "ema";
  spec.params["recent"].word = "ema";
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(), "bad value for 'recent': expected a number");
  spec.params["recent"].word.clear();
  KvSpec::Amount decay;
  decay.value = 1.0;
  spec.params["decay"] = decay;
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(),
            "bad value '1' for 'decay': expected a number between 0 and 1, both excluded (1 would "
            "be score=sum)");
  decay.value = 0.5;
  decay.percent = true;
  spec.params["decay"] = decay;
  EXPECT_FALSE(ResolveKvSpec(spec, 10).ok());
  decay.percent = false;
  spec.params["decay"] = decay;
  EXPECT_EQ(ResolveKvSpec(spec, 10).value().decay, 0.5);
  spec.params["score"].word = "mean";
  EXPECT_EQ(ResolveKvSpec(spec, 10).status().message(),
            "'decay' needs score=ema (e.g. h2o:heavy=64,recent=64,score=ema,decay=0.9)");
}

TEST(KvSpec, H2oScoreVariants) {
  // sum is the default and reads as before: Describe() leaves it out.
  KvPlan p = MustResolve("h2o:heavy=10%,recent=10%,score=sum", 512);
  EXPECT_EQ(p.score, "sum");
  EXPECT_EQ(p.Describe(), "h2o:heavy=51,recent=51");
  EXPECT_EQ(MustResolve("h2o:heavy=4,recent=4", std::nullopt).score, "sum");

  p = MustResolve("h2o:heavy=10%,recent=10%,score=mean", 512);
  EXPECT_EQ(p.score, "mean");
  EXPECT_EQ(p.budget, 102);
  EXPECT_EQ(p.Describe(), "h2o:heavy=51,recent=51,score=mean");

  p = MustResolve("h2o:score=ema,heavy=8,recent=8", std::nullopt);  // decay defaults to 0.9
  EXPECT_EQ(p.score, "ema");
  EXPECT_EQ(p.decay, 0.9);
  EXPECT_EQ(p.Describe(), "h2o:heavy=8,recent=8,score=ema,decay=0.9");
  // Any order; the decimal reads back exactly (not through the locale).
  p = MustResolve("h2o:decay=0.95,heavy=8,score=ema,recent=8", std::nullopt);
  EXPECT_EQ(p.decay, 0.95);
  EXPECT_EQ(p.Describe(), "h2o:heavy=8,recent=8,score=ema,decay=0.95");
  EXPECT_EQ(MustResolve("h2o:heavy=8,recent=8,score=ema,decay=0.000001", std::nullopt).decay, 1e-6);
  EXPECT_EQ(MustResolve("h2o:heavy=8,recent=8,score=ema,decay=0.123456789012345678901",
                        std::nullopt).decay, 0.123456789012345678901);
  // The nested spelling score=ema:decay=D is the same plan; a nested key is
  // checked like any other.
  p = MustResolve("h2o:heavy=8,score=ema:decay=0.95,recent=8", std::nullopt);
  EXPECT_EQ(p.score, "ema");
  EXPECT_EQ(p.decay, 0.95);
  EXPECT_EQ(p.recent, 8);
  EXPECT_EQ(p.Describe(), "h2o:heavy=8,recent=8,score=ema,decay=0.95");
  EXPECT_EQ(MustResolve("h2o:heavy=8,recent=8,score=ema:decay=0.5", std::nullopt).decay, 0.5);
  EXPECT_EQ(ParseKvSpec("h2o:heavy=8,recent=8,score=mean:decay=0.5").status().message(),
            "'decay' needs score=ema (e.g. h2o:heavy=64,recent=64,score=ema,decay=0.9)");
  EXPECT_EQ(
      ParseKvSpec("h2o:heavy=8,recent=8,score=ema:decay=0.9,decay=0.8").status().message(),
      "duplicate key 'decay' in KV spec 'h2o:heavy=8,recent=8,score=ema:decay=0.9,decay=0.8'");
  EXPECT_EQ(ParseKvSpec("h2o:heavy=8,recent=8,score=ema:").status().message(),
            "nothing after ':' in 'score=ema:' in KV spec 'h2o:heavy=8,recent=8,score=ema:' "
            "(expected key=value, e.g. score=ema:decay=0.9)");
  EXPECT_EQ(ParseKvSpec("h2o:heavy=8,recent=8,score=ema:sinks=2").status().message(),
            "unknown key 'sinks' for policy 'h2o' (valid: heavy, recent, score, decay, pyramid, keep)");
  EXPECT_FALSE(ParseKvSpec("h2o:heavy=8:recent=8").ok());  // only a word value nests
  // Describe() is itself a spec that resolves to the same plan.
  for (const char* text : {"h2o:heavy=8,recent=8,score=ema,decay=0.123456789012345678901",
                           "h2o:heavy=3,recent=0,score=mean"}) {
    const KvPlan a = MustResolve(text, std::nullopt);
    const KvPlan b = MustResolve(a.Describe(), std::nullopt);
    EXPECT_EQ(b.Describe(), a.Describe());
    EXPECT_EQ(b.decay, a.decay);
    EXPECT_EQ(b.score, a.score);
  }

  // The policy gets the variant.
  for (const auto& [text, kind, decay] :
       {std::tuple{"h2o:heavy=2,recent=2", H2oScore::Kind::kSum, 1.0},
        std::tuple{"h2o:heavy=2,recent=2,score=mean", H2oScore::Kind::kMean, 1.0},
        std::tuple{"h2o:heavy=2,recent=2,score=ema,decay=0.5", H2oScore::Kind::kEma, 0.5}}) {
    const std::unique_ptr<EvictionPolicy> policy = MakePolicy(MustResolve(text, std::nullopt), 64);
    const auto* h2o = dynamic_cast<const H2oPolicy*>(policy.get());
    ASSERT_NE(h2o, nullptr) << text;
    EXPECT_EQ(h2o->score().kind, kind) << text;
    EXPECT_EQ(h2o->score_decay(), decay) << text;
    EXPECT_EQ(h2o->budget(), 4);
  }
  // A spec list splits around the word values.
  EXPECT_EQ(SplitKvSpecList("full,h2o:heavy=1,recent=1,score=ema,decay=0.5,local:recent=2").value(),
            (std::vector<std::string>{"full", "h2o:heavy=1,recent=1,score=ema,decay=0.5",
                                      "local:recent=2"}));
}

TEST(KvSpec, H2oScoreErrors) {
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=max"),
            "bad value 'max' for 'score': expected one of sum, mean, ema");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=EMA"),
            "bad value 'EMA' for 'score': expected one of sum, mean, ema");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score="),
            "bad value '' for 'score': expected one of sum, mean, ema");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=10%"),
            "bad value '10%' for 'score': expected one of sum, mean, ema");
  // The nested spelling checks its word too (its success: H2oScoreVariants).
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=max:decay=0.9"),
            "bad value 'max' for 'score': expected one of sum, mean, ema");
  EXPECT_EQ(ParseError("h2o:heavy=mean,recent=1"),
            "bad value 'mean' for 'heavy': expected a non-negative integer or a percentage like "
            "10%");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,decay=0.9"),
            "'decay' needs score=ema (e.g. h2o:heavy=64,recent=64,score=ema,decay=0.9)");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=sum,decay=0.9"),
            "'decay' needs score=ema (e.g. h2o:heavy=64,recent=64,score=ema,decay=0.9)");
  for (const char* bad : {"-0.5", "0.9%", "1e-3", "0,9", "0.9.1", ".", ".5", "5.", "", "nan", "inf", "0x1",
                          " 0.9", "0.9 ", "+0.9"}) {
    const std::string text = std::string("h2o:heavy=1,recent=1,score=ema,decay=") + bad;
    if (std::string(bad) == "0,9") {
      EXPECT_EQ(ParseError(text), "key without '=' in KV spec '" + text + "': '9' (expected key=value)");
      continue;
    }
    EXPECT_EQ(ParseError(text),
              "bad value '" + std::string(bad) + "' for 'decay': expected a decimal number like 0.9")
        << text;
  }
  for (const char* bad : {"0", "1", "1.0", "0.0", "2.5", "10"}) {
    const std::string text = std::string("h2o:heavy=1,recent=1,score=ema,decay=") + bad;
    EXPECT_NE(ParseError(text).find("for 'decay': expected a number between 0 and 1, both excluded"),
              std::string::npos)
        << text;
  }
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=ema,decay=1" + std::string(400, '0')),
            "value '1" + std::string(400, '0') + "' for 'decay' is out of range");
  EXPECT_EQ(ParseError("h2o:heavy=1,recent=1,score=mean,score=sum"),
            "duplicate key 'score' in KV spec 'h2o:heavy=1,recent=1,score=mean,score=sum'");
  // Other policies take no score.
  EXPECT_EQ(ParseError("h2only:heavy=1,score=mean"),
            "unknown key 'score' for policy 'h2only' (valid: heavy, keep)");
}

TEST(KvSpec, SnapKv) {
  KvPlan p = MustResolve("snapkv:budget=64", std::nullopt);  // window 32, kernel 7
  EXPECT_EQ(p.policy, "snapkv");
  EXPECT_EQ(p.budget, 64);
  EXPECT_EQ(p.window, 32);
  EXPECT_EQ(p.kernel, 7);
  EXPECT_EQ(p.Describe(), "snapkv:budget=64,window=32,kernel=7");
  p = MustResolve("snapkv:window=16,budget=20%,kernel=1", 1000);
  EXPECT_EQ(p.budget, 200);
  EXPECT_EQ(p.window, 16);
  EXPECT_EQ(p.kernel, 1);
  EXPECT_EQ(p.Describe(), "snapkv:budget=200,window=16,kernel=1");
  p = MustResolve("snapkv:budget=20%,window=2%", 1000);
  EXPECT_EQ(p.window, 20);
  EXPECT_EQ(MustResolve(p.Describe(), std::nullopt).Describe(), p.Describe());

  const std::unique_ptr<EvictionPolicy> policy = MakePolicy(p, 4096);
  const auto* snap = dynamic_cast<const SnapKvPolicy*>(policy.get());
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->budget(), 200);
  EXPECT_EQ(snap->window(), 20);
  EXPECT_EQ(snap->kernel(), 7);
  EXPECT_EQ(snap->observation_window(), 20);
  // Other policies observe every query.
  EXPECT_EQ(MakePolicy(MustResolve("h2o:heavy=2,recent=2", std::nullopt), 64)->observation_window(),
            0);

  EXPECT_EQ(ParseError("snapkv:budget=64,heavy=3"),
            "unknown key 'heavy' for policy 'snapkv' (valid: budget, window, kernel, pyramid, keep)");
  EXPECT_EQ(ParseError("snapkv:budget=64,kernel=4"),
            "bad value '4' for 'kernel': expected an odd number of positions up to 2147483647 "
            "(the pooling is centred on each token; 1 is none)");
  EXPECT_NE(ParseError("snapkv:budget=64,kernel=0").find("expected an odd number"),
            std::string::npos);
  EXPECT_NE(ParseError("snapkv:budget=64,kernel=2147483649").find("expected an odd number"),
            std::string::npos);
  EXPECT_EQ(ParseError("snapkv:budget=64,kernel=7%"),
            "bad value '7%' for 'kernel': expected a non-negative integer");
  EXPECT_EQ(ParseError("snapkv:budget=64,window=-1"),
            "bad value '-1' for 'window': expected a non-negative integer or a percentage like 10%");
  EXPECT_EQ(ResolveError("snapkv:budget=32", std::nullopt),
            "snapkv needs 1 <= window < budget (snapkv:budget=32 gives window=32, budget=32)");
  EXPECT_EQ(ResolveError("snapkv:budget=64,window=0", std::nullopt),
            "snapkv needs 1 <= window < budget (snapkv:budget=64,window=0 gives window=0, "
            "budget=64)");
  EXPECT_EQ(ResolveError("snapkv:budget=10%,window=1%", 50),
            "snapkv needs 1 <= window < budget (snapkv:budget=10%,window=1% gives window=0, "
            "budget=5 for a 50-token sequence)");
  EXPECT_EQ(ResolveError("snapkv:budget=0,window=0", std::nullopt),
            "KV budget must be at least 1 token (snapkv:budget=0,window=0 gives 0)");
  // Specs of a list split around it.
  EXPECT_EQ(SplitKvSpecList("snapkv:budget=64,window=8,full").value(),
            (std::vector<std::string>{"snapkv:budget=64,window=8", "full"}));
}

TEST(KvSpec, Pyramid) {
  KvPlan p = MustResolve("h2o:heavy=10%,recent=10%,pyramid=20", 512);
  EXPECT_EQ(p.pyramid, 20);
  EXPECT_EQ(p.budget, 102);
  EXPECT_EQ(p.Describe(), "h2o:heavy=51,recent=51,pyramid=20");
  p = MustResolve("h2o:heavy=8,recent=8,score=ema,decay=0.5,pyramid=4", std::nullopt);
  EXPECT_EQ(p.Describe(), "h2o:heavy=8,recent=8,score=ema,decay=0.5,pyramid=4");
  p = MustResolve("snapkv:budget=64,pyramid=1", std::nullopt);
  EXPECT_EQ(p.pyramid, 1);
  EXPECT_EQ(p.Describe(), "snapkv:budget=64,window=32,kernel=7,pyramid=1");
  EXPECT_EQ(MustResolve(p.Describe(), std::nullopt).Describe(), p.Describe());
  EXPECT_EQ(MustResolve("h2o:heavy=8,recent=8", std::nullopt).pyramid, 0);

  EXPECT_EQ(ParseError("h2o:heavy=8,recent=8,pyramid=0"),
            "bad value '0' for 'pyramid': expected an integer from 1 to 2147483647 (PyramidKV's "
            "beta: the top layer keeps 1/beta of the selected tokens; 1 is flat)");
  EXPECT_NE(ParseError("h2o:heavy=8,recent=8,pyramid=2147483648").find("for 'pyramid'"),
            std::string::npos);
  EXPECT_EQ(ParseError("h2o:heavy=8,recent=8,pyramid=10%"),
            "bad value '10%' for 'pyramid': expected a non-negative integer");
  EXPECT_EQ(ParseError("h2o:heavy=8,recent=8,pyramid=yes"),
            "bad value 'yes' for 'pyramid': expected a non-negative integer");
  EXPECT_EQ(ParseError("local:recent=8,pyramid=2"),
            "unknown key 'pyramid' for policy 'local' (valid: recent, keep)");
  EXPECT_EQ(ResolveError("h2o:heavy=1073741823,recent=1,pyramid=2", std::nullopt),
            "a pyramid needs a KV budget of at most 1073741823 tokens "
            "(h2o:heavy=1073741823,recent=1,pyramid=2 gives 1073741824)");
}

std::vector<std::string> Split(std::string_view text) {
  auto r = SplitKvSpecList(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : std::vector<std::string>{};
}

using Specs = std::vector<std::string>;

TEST(SplitKvSpecList, SpecsWithTheirOwnCommas) {
  EXPECT_EQ(Split("full"), Specs{"full"});
  EXPECT_EQ(Split("full,h2o:heavy=10%,recent=10%"), (Specs{"full", "h2o:heavy=10%,recent=10%"}));
  EXPECT_EQ(Split("local:recent=8,sink:sinks=4,recent=4"),
            (Specs{"local:recent=8", "sink:sinks=4,recent=4"}));
  EXPECT_EQ(Split("h2o:heavy=8,recent=8,full,tova:k=16"),
            (Specs{"h2o:heavy=8,recent=8", "full", "tova:k=16"}));
  EXPECT_EQ(Split("random:k=8,recent=2,seed=3,h2only:heavy=4"),
            (Specs{"random:k=8,recent=2,seed=3", "h2only:heavy=4"}));
  // "h2only" is not "h2o" followed by something: names match whole.
  EXPECT_EQ(Split("h2o:heavy=1,recent=1,h2only:heavy=2"),
            (Specs{"h2o:heavy=1,recent=1", "h2only:heavy=2"}));
  EXPECT_EQ(Split(" full , h2o:heavy=8, recent=8 "), (Specs{"full", "h2o:heavy=8,recent=8"}));
}

TEST(SplitKvSpecList, UnknownPolicyBecomesItsOwnSpecForTheParserToReject) {
  EXPECT_EQ(Split("full,bogus"), (Specs{"full", "bogus"}));
  EXPECT_EQ(Split("bogus:x=1,y=2"), Specs{"bogus:x=1,y=2"});
}

TEST(SplitKvSpecList, Errors) {
  for (const char* bad :
       {"", "  ", "full,", ",full", "full,,h2o:heavy=1,recent=1", "heavy=8", "recent=8,full"}) {
    auto r = SplitKvSpecList(bad);
    EXPECT_FALSE(r.ok()) << "'" << bad << "'";
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
    }
  }
  EXPECT_NE(SplitKvSpecList("heavy=8,full").status().message().find("before any policy"),
            std::string::npos);
}

// keep=N, a key of every evicting policy: pinned first tokens on top of the
// budget, in the plan's description, read back by the parser; a count,
// never a percentage, at most the budget; full takes none.
TEST(KvSpec, KeepPinsFirstTokensOnTopOfTheBudget) {
  for (const char* text : {"h2o:heavy=8,recent=8,keep=4", "snapkv:budget=16,window=4,keep=4",
                           "local:recent=16,keep=4", "tova:k=16,keep=4",
                           "random:k=8,recent=8,seed=1,keep=4", "sink:sinks=2,recent=14,keep=4"}) {
    SCOPED_TRACE(text);
    const KvPlan plan = ResolveKvSpec(ParseKvSpec(text).value(), std::nullopt).value();
    EXPECT_EQ(plan.keep, 4);
    EXPECT_EQ(plan.budget, 16);
    const std::string described = plan.Describe();
    EXPECT_NE(described.find(",keep=4"), std::string::npos) << described;
    EXPECT_EQ(ResolveKvSpec(ParseKvSpec(described).value(), std::nullopt).value().Describe(),
              described);
  }
  EXPECT_EQ(ResolveKvSpec(ParseKvSpec("h2o:heavy=8,recent=8").value(), std::nullopt)->Describe(),
            "h2o:heavy=8,recent=8");
  EXPECT_NE(ParseError("h2o:heavy=8,recent=8,keep=10%").find("keep"), std::string::npos);
  auto over = ResolveKvSpec(ParseKvSpec("h2o:heavy=8,recent=8,keep=17").value(), std::nullopt);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("more tokens than the policy's budget of 16"),
            std::string::npos);
  EXPECT_EQ(ParseError("full:keep=4"), "unknown key 'keep' for policy 'full' (it takes no parameters)");
  KvSpec spec = ParseKvSpec("h2o:heavy=8,recent=8").value();
  SetKvKeep(spec, 6);
  EXPECT_EQ(ResolveKvSpec(spec, std::nullopt)->keep, 6);
  KvSpec full = ParseKvSpec("full").value();
  SetKvKeep(full, 6);
  EXPECT_TRUE(full.params.empty());
}

}  // namespace
}  // namespace h2o
