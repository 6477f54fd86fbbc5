// Each evicting policy on the real model against a brute-force simulation
// (reference_forward.h, double precision): after every Eval the engine's
// kept set must be what the policy's rule picks from the simulation's own
// scores (up to float rounding of near ties), and its logits must match
// the simulation's with that same kept set. Covers prefill-then-compress
// (a chunk larger than the budget), budget 1, TOVA's step attention, the
// random policy's invariants, and pos-shift's rank positions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kv/kept_positions.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "model/reference_forward.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

using Entry = testing::ReferenceForward::Entry;

using Victim = testing::ReferenceForward::Victim;

struct Rule {
  int32_t budget = 0;
  int32_t recent = 0;
  Victim victim = Victim::kAny;
};

// The engine kept `kept` out of the simulation's `present` (ascending
// positions): it must hold min(budget, present) tokens, all present, the
// `recent` highest among them, and otherwise the highest-ranked candidates.
// Scores are compared with a tolerance: the engine accumulates in float.
void ExpectRuleKept(const std::vector<Entry>& present, const std::vector<int32_t>& kept, const Rule& rule,
                    const std::string& where) {
  ASSERT_EQ(kept.size(), std::min<size_t>(rule.budget, present.size())) << where;
  const size_t n_candidates = present.size() - std::min<size_t>(rule.recent, present.size());
  double lowest_kept = INFINITY, highest_evicted = -INFINITY, largest = 0.0;
  for (size_t i = 0; i < present.size(); ++i) {
    const bool is_kept = std::binary_search(kept.begin(), kept.end(), present[i].pos);
    if (i >= n_candidates) {
      EXPECT_TRUE(is_kept) << where << ": recent position " << present[i].pos << " evicted";
      continue;
    }
    const double key = testing::ReferenceForward::Key(present[i], rule.victim);
    largest = std::max(largest, std::fabs(key));
    if (is_kept) {
      lowest_kept = std::min(lowest_kept, key);
    } else {
      highest_evicted = std::max(highest_evicted, key);
    }
  }
  for (int32_t pos : kept) {
    EXPECT_TRUE(std::any_of(present.begin(), present.end(), [&](const Entry& e) { return e.pos == pos; }))
        << where << ": kept position " << pos << " was never present";
  }
  if (rule.victim != Victim::kAny) {
    EXPECT_GE(lowest_kept, highest_evicted - 1e-5 * (1.0 + largest)) << where;
  }
}

struct PolicyRun {
  std::string spec;
  Rule rule;
  std::vector<int32_t> prompt;  // fed as one Eval (split into max_chunk by the engine)
  int32_t max_chunk = 1;
  int32_t decode = 0;  // greedy tokens fed one at a time afterwards
  bool pos_shift = false;
};

std::unique_ptr<Session> MakeSession(const Model& model, const PolicyRun& run) {
  auto spec = ParseKvSpec(run.spec);
  EXPECT_TRUE(spec.ok()) << run.spec;
  auto plan = ResolveKvSpec(*spec, std::nullopt);
  EXPECT_TRUE(plan.ok()) << run.spec;
  SessionOptions options;
  options.kv = *plan;
  options.max_chunk = run.max_chunk;
  options.kv_types = {TensorType::kF32, TensorType::kF32};  // the simulation is exact; f16 keys would add rounding
  options.kv_pos_shift = run.pos_shift;
  options.n_threads = 2;
  auto session = Session::Create(model, options);
  EXPECT_TRUE(session.ok()) << run.spec;
  return std::move(session).value();
}

// Feeds the engine and the simulation the same tokens; after each Eval
// checks the kept sets against the rule, then the logits. Returns the
// largest logit difference seen.
double Simulate(const Model& model, const PolicyRun& run) {
  const HParams& hp = model.hparams();
  auto session = MakeSession(model, run);
  testing::ReferenceForward ref(model, run.pos_shift);
  std::vector<int32_t> feed = run.prompt;
  double worst = 0.0;
  for (int32_t step = 0; step <= run.decode; ++step) {
    const std::string where = run.spec + " step " + std::to_string(step);
    EXPECT_TRUE(session->Eval(feed).ok()) << where;
    std::vector<double> want;
    // The engine evicts after each chunk of at most max_chunk tokens.
    for (size_t begin = 0; begin < feed.size(); begin += run.max_chunk) {
      const size_t len = std::min<size_t>(run.max_chunk, feed.size() - begin);
      want = ref.Eval(std::span<const int32_t>(feed.data() + begin, len));
      if (begin + len < feed.size()) {
        ADD_FAILURE() << "the simulation checks kept sets after whole Evals: use one chunk per Eval";
        return INFINITY;
      }
    }
    for (int32_t l = 0; l < hp.n_layer; ++l) {
      for (int32_t g = 0; g < hp.n_head_kv; ++g) {
        const std::vector<int32_t> kept = testing::KeptPositions(session->cache(), l, g);
        ExpectRuleKept(ref.kept(l, g), kept, run.rule,
                       where + " layer " + std::to_string(l) + " KV head " + std::to_string(g));
        ref.KeepOnly(l, g, kept);
      }
    }
    // Logits after the last chunk's attention: its kept set is the one
    // before this step's eviction, which both sides shared.
    const auto got = session->last_logits();
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size() && i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
    feed = {static_cast<int32_t>(std::max_element(got.begin(), got.end()) - got.begin())};
  }
  return worst;
}

std::vector<int32_t> Prompt(size_t n) { return testing::ReadStreamPrefix("s001.txt", n); }

class PolicySimulation : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Load(testing::ModelPath());
    ASSERT_TRUE(model.ok());
    model_ = std::move(model).value();
  }
  // Logits of order 10; the engine computes in float with f32 K/V.
  static constexpr double kLogitTolerance = 2e-3;
  std::unique_ptr<Model> model_;
};

TEST_F(PolicySimulation, H2oTokenByToken) {
  // One token per Eval, so every eviction is checked.
  EXPECT_LT(Simulate(*model_, {"h2o:heavy=8,recent=8", {16, 8, Victim::kLowestAcc}, Prompt(1), 1, 40}),
            kLogitTolerance);
}

TEST_F(PolicySimulation, H2oPrefillLargerThanTheBudgetThenCompress) {
  // generate's default: the whole prompt in one chunk, evicted down to the
  // budget at once, then one token at a time.
  const PolicyRun run{"h2o:heavy=8,recent=8", {16, 8, Victim::kLowestAcc}, Prompt(60), 60, 20};
  EXPECT_LT(Simulate(*model_, run), kLogitTolerance);
}

TEST_F(PolicySimulation, TovaUsesTheLastQuerysAttention) {
  PolicyRun run{"tova:k=12", {12, 0, Victim::kLowestLast}, Prompt(1), 1, 40};
  EXPECT_LT(Simulate(*model_, run), kLogitTolerance);
  // And after a prefill: the last query of the chunk decides.
  run.prompt = Prompt(50);
  run.max_chunk = 50;
  run.decode = 10;
  EXPECT_LT(Simulate(*model_, run), kLogitTolerance);
}

TEST_F(PolicySimulation, RandomKeepsTheRecentWindowAndEvictsOnlyWhatWasPresent) {
  const PolicyRun run{"random:k=8,recent=8,seed=1", {16, 8, Victim::kAny}, Prompt(1), 1, 40};
  EXPECT_LT(Simulate(*model_, run), kLogitTolerance);
}

TEST_F(PolicySimulation, BudgetOfOneToken) {
  // A single slot: every step attends to the kept token and the new one.
  for (const PolicyRun& run : {PolicyRun{"h2only:heavy=1", {1, 0, Victim::kLowestAcc}, Prompt(1), 1, 30},
                         PolicyRun{"local:recent=1", {1, 1, Victim::kLowestPosition}, Prompt(1), 1, 30},
                         PolicyRun{"tova:k=1", {1, 0, Victim::kLowestLast}, Prompt(1), 1, 30},
                         PolicyRun{"h2o:heavy=1,recent=0", {1, 0, Victim::kLowestAcc}, Prompt(20), 20, 10}}) {
    EXPECT_LT(Simulate(*model_, run), kLogitTolerance) << run.spec;
  }
}

TEST_F(PolicySimulation, PosShiftRotatesByRankAmongTheKeptTokens) {
  PolicyRun run{"h2o:heavy=8,recent=8", {16, 8, Victim::kLowestAcc}, Prompt(1), 1, 40, /*pos_shift=*/true};
  EXPECT_LT(Simulate(*model_, run), kLogitTolerance);
}

TEST_F(PolicySimulation, PosShiftWithoutEvictionIsTheFullCacheBitForBit) {
  // Nothing evicted: every rank is the position, so nothing may change.
  PolicyRun full{"full", {}, Prompt(60), 1, 0};
  PolicyRun shifted{"h2o:heavy=100,recent=100", {}, Prompt(60), 1, 0, /*pos_shift=*/true};
  auto a = MakeSession(*model_, full);
  auto b = MakeSession(*model_, shifted);
  for (int32_t id : full.prompt) {
    const int32_t one[] = {id};
    ASSERT_TRUE(a->Eval(one).ok());
    ASSERT_TRUE(b->Eval(one).ok());
    ASSERT_EQ(0, std::memcmp(a->last_logits().data(), b->last_logits().data(),
                             a->last_logits().size() * sizeof(float)));
  }
}

}  // namespace
}  // namespace h2o
