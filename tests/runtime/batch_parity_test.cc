// N sequences decoded together by one Engine give exactly the greedy ids of
// N runs alone, whatever the mix of KV policies and budgets, with sequences
// joining (their prompt chunks batched with the others' decode tokens) and
// leaving mid-run. The alone runs are Sessions, whose Eval feeds the same
// chunks one sequence at a time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "convert/mkmodel.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "q8_model.h"
#include "runtime/engine.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

struct Plan {
  std::string kv;
  std::string stream;  // the prompt: the first prompt_len ids of this stream
  int32_t prompt_len;
  int32_t start_step;  // the batched run admits it at this step
  int32_t n_generate;
};

SequenceOptions Options(const std::string& kv, int32_t prompt_len) {
  SequenceOptions o;
  o.n_ctx = 256;
  o.max_chunk = 7;  // prompts arrive in several chunks, each evicting
  auto spec = ParseKvSpec(kv);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  auto plan = ResolveKvSpec(*spec, prompt_len);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  o.kv = *plan;
  return o;
}

std::vector<int32_t> Prompt(const Plan& p) {
  std::vector<int32_t> ids = testing::ReadStream(p.stream);
  ids.resize(p.prompt_len);
  return ids;
}

// Greedy ids and each step's logits, one sequence alone.
struct Decoded {
  std::vector<int32_t> ids;
  std::vector<std::vector<float>> logits;
};

Decoded Alone(const Model& model, const Plan& p) {
  SessionOptions o;
  static_cast<SequenceOptions&>(o) = Options(p.kv, p.prompt_len);
  o.n_threads = 2;
  auto session = Session::Create(model, o);
  EXPECT_TRUE(session.ok()) << session.status().message();
  Decoded run;
  EXPECT_TRUE((*session)->Eval(Prompt(p)).ok());
  for (int32_t i = 0; i < p.n_generate; ++i) {
    const std::span<const float> logits = (*session)->last_logits();
    run.logits.emplace_back(logits.begin(), logits.end());
    run.ids.push_back(ArgMax(logits));
    const int32_t next[] = {run.ids.back()};
    if (i + 1 < p.n_generate) {
      EXPECT_TRUE((*session)->Eval(next).ok());
    }
  }
  return run;
}

// The batched run: each step batches every admitted sequence's next piece
// (a prompt chunk of up to max_chunk tokens, or its last sampled token).
std::vector<Decoded> Together(const Model& model, const std::vector<Plan>& plans) {
  auto engine = Engine::Create(model, {.n_threads = 2, .max_batch_tokens = 64});
  EXPECT_TRUE(engine.ok());
  struct Live {
    std::unique_ptr<Sequence> seq;
    std::vector<int32_t> prompt;
    size_t fed = 0;  // prompt tokens fed
    bool done = false;
  };
  std::vector<Live> live(plans.size());
  std::vector<Decoded> runs(plans.size());
  for (int32_t step = 0;; ++step) {
    std::vector<BatchItem> batch;
    std::vector<int32_t> next(plans.size());
    bool any_left = false;
    for (size_t i = 0; i < plans.size(); ++i) {
      Live& l = live[i];
      if (step == plans[i].start_step) {
        auto seq = (*engine)->NewSequence(Options(plans[i].kv, plans[i].prompt_len));
        EXPECT_TRUE(seq.ok()) << seq.status().message();
        l.seq = std::move(seq).value();
        l.prompt = Prompt(plans[i]);
      }
      if (l.done) continue;
      any_left = true;
      if (l.seq == nullptr) continue;  // not admitted yet
      if (l.fed < l.prompt.size()) {
        const size_t len = std::min<size_t>(l.seq->max_chunk(), l.prompt.size() - l.fed);
        batch.push_back({l.seq.get(), std::span<const int32_t>(l.prompt).subspan(l.fed, len),
                         LogitsFor::kLastToken, l.fed + len == l.prompt.size()});
        l.fed += len;
      } else {
        next[i] = runs[i].ids.back();
        batch.push_back({l.seq.get(), std::span<const int32_t>(&next[i], 1)});
      }
    }
    if (!any_left) break;
    if (batch.empty()) continue;
    EXPECT_TRUE((*engine)->Forward(batch).ok());
    for (size_t i = 0; i < plans.size(); ++i) {
      Live& l = live[i];
      if (l.seq == nullptr || l.done || l.fed < l.prompt.size()) continue;
      const std::span<const float> logits = l.seq->last_logits();
      runs[i].logits.emplace_back(logits.begin(), logits.end());
      runs[i].ids.push_back(ArgMax(logits));
      if (static_cast<int32_t>(runs[i].ids.size()) == plans[i].n_generate) {
        l.done = true;
        l.seq.reset();  // leaves: its cache is freed now
      }
    }
  }
  return runs;
}

const std::vector<Plan> kPlans = {
    {"full", "s001.txt", 20, 0, 30},
    {"h2o:heavy=8,recent=8", "s002.txt", 33, 0, 40},
    {"local:recent=12", "s003.txt", 9, 2, 25},
    {"sink:sinks=4,recent=12", "s004.txt", 40, 3, 35},
    {"tova:k=16", "s005.txt", 17, 5, 30},
    {"random:k=8,recent=8,seed=3", "s006.txt", 25, 5, 28},
    {"h2only:heavy=16", "s007.txt", 30, 11, 20},
    {"h2o:heavy=10%,recent=10%", "s008.txt", 50, 30, 15},
    {"snapkv:budget=24,window=8", "s009.txt", 60, 4, 20},
};

// stories260K has f32 weights: a batch multiplies them as a blocked matrix
// product, a single row as a dot, so sums round differently (and an
// evicting cache may then break a near-tie of scores differently); the ids
// must still agree, and the logits stay within 1e-3 of each row's largest
// (measured: up to 1.1e-4).
TEST(BatchParity, MixedPoliciesJoiningAndLeavingMatchRunsAlone) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const std::vector<Decoded> together = Together(**model, kPlans);
  for (size_t i = 0; i < kPlans.size(); ++i) {
    SCOPED_TRACE(kPlans[i].kv);
    const Decoded alone = Alone(**model, kPlans[i]);
    ASSERT_EQ(together[i].ids, alone.ids);
    for (size_t s = 0; s < alone.logits.size(); ++s) {
      float largest = 0.0f;
      for (const float l : alone.logits[s]) largest = std::max(largest, std::fabs(l));
      for (size_t v = 0; v < alone.logits[s].size(); ++v) {
        ASSERT_NEAR(together[i].logits[s][v], alone.logits[s][v], 1e-3f * largest)
            << "step " << s << " token " << v;
      }
    }
  }
}

// A policy whose victim choice changes the policy object (random's
// generator, snapkv's selection in progress) evicts head after head on the
// driver thread; others evict each head on the pool after its attention.
// Three sequences of 4 KV heads make 12 (sequence, head) pairs, which two
// threads split after the 6th, so the middle sequence's heads straddle the
// threads in every prompt chunk (enough work to run on the pool). Under
// TSan (scripts/test_sanitizers.sh) choosing its victims on both threads
// would be a reported race; here the ids must match the runs alone.
TEST(BatchParity, StatefulPolicyBetweenOthersMatchesRunsAlone) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  for (const char* stateful : {"snapkv:budget=48,window=8", "random:k=24,recent=24,seed=5"}) {
    SCOPED_TRACE(stateful);
    const std::vector<Plan> plans = {
        {"h2o:heavy=24,recent=24", "s010.txt", 90, 0, 12},
        {stateful, "s011.txt", 90, 0, 12},
        {"tova:k=48", "s012.txt", 90, 0, 12},
    };
    const std::vector<Decoded> together = Together(**model, plans);
    for (size_t i = 0; i < plans.size(); ++i) {
      EXPECT_EQ(together[i].ids, Alone(**model, plans[i]).ids) << plans[i].kv;
    }
  }
}

// With q8_0 weights every row's product is exact integer sums scaled the
// same way whatever the batch (MatMul's contract), and everything else in
// the forward works row by row: the logits are bit for bit those of the
// runs alone.
TEST(BatchParity, IntegerDotWeightsGiveBitIdenticalLogits) {
  const Model& model = testing::Q8Model();
  const std::vector<Decoded> together = Together(model, kPlans);
  for (size_t i = 0; i < kPlans.size(); ++i) {
    SCOPED_TRACE(kPlans[i].kv);
    const Decoded alone = Alone(model, kPlans[i]);
    EXPECT_EQ(together[i].ids, alone.ids);
    EXPECT_EQ(together[i].logits, alone.logits);
  }
}

}  // namespace
}  // namespace h2o
