// The policies of issue 17 item 2 through the real binary on the bundled
// model, each against a double-precision forward (tests/model/
// reference_forward.h) that evicts by the policy's rule written out here:
// h2o's score=mean and score=ema, snapkv, and both with a pyramid of
// per-layer budgets. The engine runs with f32 K/V; a near tie
// can still go the other way in float, so the kept sets are compared head
// by head (most must match exactly) and the NLL within 1%, the tolerance the
// independent reference uses for evicting policies.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "cli/run_binary.h"
#include "model/model.h"
#include "model/reference_forward.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ReferenceForward;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();
const std::string kStream = testing::DataPath("stories260K/streams/s002.txt");  // 512 ids

// What the reference keeps per (layer, KV head), and its NLL.
struct Simulated {
  double nll = 0.0;
  std::vector<std::vector<int32_t>> kept;  // [layer * n_head_kv + head], ascending
};

double TokenNll(const std::vector<double>& logits, int32_t next) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (double l : logits) sum += std::exp(l - max);
  return max + std::log(sum) - logits[next];
}

// h2o one token at a time: the victim is the lowest key outside the `recent`
// highest positions, ties to the lowest position. mean: the accumulated
// attention over the queries since the token arrived; ema: before each
// token the accumulated attention is multiplied by `decay`.
enum class Score { kSum, kMean, kEma };

// layer_budgets: each layer's budget (a pyramid); empty: heavy + recent.
Simulated SimulateH2o(const std::vector<int32_t>& ids, int32_t heavy, int32_t recent, Score score,
                      double decay, const std::vector<int32_t>& layer_budgets = {}) {
  auto model = Model::Load(kModel);
  EXPECT_TRUE(model.ok());
  ReferenceForward ref(**model);
  const HParams& hp = (*model)->hparams();
  Simulated sim;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    if (score == Score::kEma) {
      for (int32_t l = 0; l < hp.n_layer; ++l) {
        for (int32_t g = 0; g < hp.n_head_kv; ++g) {
          for (ReferenceForward::Entry& e : ref.kept(l, g)) e.acc *= decay;
        }
      }
    }
    const std::vector<double> logits = ref.Eval(std::span<const int32_t>(&ids[t], 1));
    const auto newest = static_cast<int32_t>(t);
    const auto key = [&](const ReferenceForward::Entry& e) {
      return score == Score::kMean ? e.acc / (newest - e.pos + 1) : e.acc;
    };
    for (int32_t l = 0; l < hp.n_layer; ++l) {
      for (int32_t g = 0; g < hp.n_head_kv; ++g) {
        std::vector<ReferenceForward::Entry>& entries = ref.kept(l, g);  // ascending positions
        const int32_t budget = layer_budgets.empty() ? heavy + recent : layer_budgets[l];
        while (static_cast<int32_t>(entries.size()) > budget) {
          const auto end = entries.end() - std::min<size_t>(recent, entries.size());
          entries.erase(std::min_element(entries.begin(), end, [&](const auto& a, const auto& b) {
            return key(a) < key(b);  // the first (lowest position) of equals
          }));
        }
      }
    }
    sim.nll += TokenNll(logits, ids[t + 1]);
  }
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    for (int32_t g = 0; g < hp.n_head_kv; ++g) sim.kept.push_back(ref.Positions(l, g));
  }
  return sim;
}

struct EngineRun {
  double nll = 0.0;
  std::vector<std::vector<int32_t>> kept;
};

// `h2o perplexity` of the stream under `spec`, f32 K/V, with its final
// kept positions from --kv-dump.
EngineRun Perplexity(const std::string& spec, const std::string& extra = "") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("h2o_variants_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dump = (dir / "kv.json").string();
  const auto r = RunH2o("perplexity -m " + kModel + " --kv " + spec + " " + extra +
                        " --kv-type f32 --no-kl --json --kv-dump " + dump + " --token-file " +
                        kStream);
  const auto kv = nlohmann::json::parse(testing::ReadFileOrEmpty(dump), nullptr, false);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EngineRun run;
  if (r.exit_code != 0 || kv.is_discarded()) return run;
  run.nll = nlohmann::json::parse(r.out)["policies"][0]["nll_sum"].get<double>();
  for (const auto& layer : kv["layers"]) {
    for (const auto& head : layer["heads"]) {
      std::vector<int32_t> pos = head["positions"].get<std::vector<int32_t>>();
      std::sort(pos.begin(), pos.end());
      run.kept.push_back(pos);
    }
  }
  return run;
}

int32_t SameHeads(const std::vector<std::vector<int32_t>>& a,
                  const std::vector<std::vector<int32_t>>& b) {
  int32_t same = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) same += a[i] == b[i] ? 1 : 0;
  return same;
}

TEST(PolicyVariantsCli, H2oScoreMeanAndEmaMatchTheSimulation) {
  const std::vector<int32_t> ids = testing::ReadStream("s002.txt");
  ASSERT_EQ(ids.size(), 512u);
  const Simulated sum = SimulateH2o(ids, 16, 16, Score::kSum, 1.0);
  const Simulated mean = SimulateH2o(ids, 16, 16, Score::kMean, 1.0);
  const Simulated ema = SimulateH2o(ids, 16, 16, Score::kEma, 0.9);
  // The three rules keep different heavy hitters (else this test could not
  // tell them apart).
  EXPECT_LE(SameHeads(mean.kept, sum.kept), 2);
  EXPECT_LE(SameHeads(ema.kept, sum.kept), 2);
  EXPECT_LE(SameHeads(ema.kept, mean.kept), 2);

  const struct {
    const char* spec;
    const Simulated& sim;
  } cases[] = {{"h2o:heavy=16,recent=16,score=mean", mean},
               {"h2o:heavy=16,recent=16,score=ema,decay=0.9", ema},
               {"h2o:heavy=16,recent=16", sum}};
  for (const auto& c : cases) {
    const EngineRun run = Perplexity(c.spec);
    ASSERT_EQ(run.kept.size(), c.sim.kept.size()) << c.spec;
    // 20 (layer, KV head) pairs.
    EXPECT_GE(SameHeads(run.kept, c.sim.kept), 16) << c.spec;
    EXPECT_NEAR(run.nll, c.sim.nll, 1e-2 * c.sim.nll) << c.spec;
  }
}

// SnapKV's selection by the reference: the prompt's first `overflow_at`
// tokens in one pass (the pass that first overflows the budget), the
// attention of its last `window` queries summed per KV head over the
// group, max-pooled over `kernel` positions among the candidates (the
// positions before the window); the best budget - window candidates per
// (layer, KV head), ascending. Ties to the higher position.
// layer_budgets: each layer's budget (a pyramid); empty: `budget`.
std::vector<std::vector<int32_t>> SimulateSnapKvSelection(
    const std::vector<int32_t>& prompt, int32_t overflow_at, int32_t budget, int32_t window,
    int32_t kernel, const std::vector<int32_t>& layer_budgets = {}) {
  auto model = Model::Load(kModel);
  EXPECT_TRUE(model.ok());
  const HParams& hp = (*model)->hparams();
  ReferenceForward ref(**model);
  const int32_t candidates = overflow_at - window;
  std::vector<std::vector<double>> observed(hp.n_layer * hp.n_head_kv,
                                            std::vector<double>(candidates, 0.0));
  ref.on_attention = [&](int32_t l, int32_t head, int32_t query_pos, const std::vector<double>& p) {
    if (query_pos < overflow_at - window) return;
    std::vector<double>& acc = observed[l * hp.n_head_kv + head / hp.n_group()];
    for (int32_t s = 0; s < candidates; ++s) acc[s] += p[s];  // a full cache: index = position
  };
  ref.Eval(std::span<const int32_t>(prompt.data(), overflow_at));
  std::vector<std::vector<int32_t>> selected;
  for (size_t i = 0; i < observed.size(); ++i) {
    const std::vector<double>& acc = observed[i];
    const int32_t layer_budget = layer_budgets.empty() ? budget : layer_budgets[i / hp.n_head_kv];
    std::vector<std::pair<double, int32_t>> ranked;
    for (int32_t p = 0; p < candidates; ++p) {
      double pooled = acc[p];
      for (int32_t q = std::max(0, p - kernel / 2); q <= std::min(candidates - 1, p + kernel / 2); ++q) {
        pooled = std::max(pooled, acc[q]);
      }
      ranked.push_back({pooled, p});
    }
    std::sort(ranked.rbegin(), ranked.rend());
    std::vector<int32_t> best;
    for (int32_t j = 0; j < layer_budget - window; ++j) best.push_back(ranked[j].second);
    std::sort(best.begin(), best.end());
    selected.push_back(best);
  }
  return selected;
}

// `h2o generate` of `prompt` then 8 greedy tokens under `spec` (f32 K/V);
// the kept positions per (layer, KV head) from --kv-dump, ascending.
std::vector<std::vector<int32_t>> GenerateKept(const std::vector<int32_t>& prompt,
                                               const std::string& spec,
                                               const std::string& extra = "") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("h2o_snapkv_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dump = (dir / "kv.json").string();
  std::string tokens;
  for (int32_t id : prompt) tokens.append(tokens.empty() ? "" : " ").append(std::to_string(id));
  const auto r = RunH2o("generate -m " + kModel + " --tokens '" + tokens + "' -n 8 --temp 0 --kv " +
                        spec + " " + extra + " --kv-type f32 --kv-dump " + dump);
  const auto kv = nlohmann::json::parse(testing::ReadFileOrEmpty(dump), nullptr, false);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::vector<int32_t>> kept;
  if (r.exit_code != 0 || kv.is_discarded()) return kept;
  for (const auto& layer : kv["layers"]) {
    for (const auto& head : layer["heads"]) {
      std::vector<int32_t> pos = head["positions"].get<std::vector<int32_t>>();
      std::sort(pos.begin(), pos.end());
      kept.push_back(pos);
    }
  }
  return kept;
}

TEST(PolicyVariantsCli, SnapKvKeepsWhatTheLastPromptQueriesAttendTo) {
  const std::vector<int32_t> prompt = testing::ReadStreamPrefix("s002.txt", 200);
  constexpr int32_t kBudget = 64, kWindow = 16;
  // The whole prompt in one pass (generate's default): the observation
  // window is the last 16 prompt queries.
  const auto selected = SimulateSnapKvSelection(prompt, 200, kBudget, kWindow, 7);
  const auto kept = GenerateKept(prompt, "snapkv:budget=64,window=16,kernel=7");
  ASSERT_EQ(kept.size(), selected.size());
  int32_t same = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    ASSERT_EQ(kept[i].size(), static_cast<size_t>(kBudget));
    // Decoding slid the window: the newest 16 positions, after the prompt's
    // selection (every selected position is below the prompt's window).
    const std::vector<int32_t> head(kept[i].begin(), kept[i].end() - kWindow);
    for (int32_t j = 0; j < kWindow; ++j) {
      EXPECT_EQ(kept[i][kBudget - kWindow + j], kept[i].back() - kWindow + 1 + j);
    }
    EXPECT_GE(kept[i].back(), 200);
    same += head == selected[i] ? 1 : 0;
  }
  EXPECT_GE(same, 16) << "of 20 (layer, KV head) pairs";

  // What a wrong implementation would keep differs: no pooling, or the
  // first 16 queries' window instead of the last.
  const auto unpooled = SimulateSnapKvSelection(prompt, 200, kBudget, kWindow, 1);
  int32_t same_unpooled = 0;
  for (size_t i = 0; i < selected.size(); ++i) same_unpooled += unpooled[i] == selected[i] ? 1 : 0;
  EXPECT_LE(same_unpooled, 2);
  const auto kept_unpooled = GenerateKept(prompt, "snapkv:budget=64,window=16,kernel=1");
  int32_t same1 = 0;
  for (size_t i = 0; i < kept_unpooled.size(); ++i) {
    same1 += std::vector<int32_t>(kept_unpooled[i].begin(), kept_unpooled[i].end() - kWindow) ==
                     unpooled[i]
                 ? 1
                 : 0;
  }
  EXPECT_GE(same1, 16);
}

TEST(PolicyVariantsCli, SnapKvInChunksSelectsAtTheFirstChunkOverBudget) {
  // Chunks of 100: the first already overflows 64, so its last 16 queries
  // (positions 84..99) observe and the selection is among positions 0..83;
  // the second chunk only slides the window.
  const std::vector<int32_t> prompt = testing::ReadStreamPrefix("s002.txt", 200);
  const auto selected = SimulateSnapKvSelection(prompt, 100, 64, 16, 7);
  const auto kept = GenerateKept(prompt, "snapkv:budget=64,window=16", "--chunk 100");
  ASSERT_EQ(kept.size(), selected.size());
  int32_t same = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    ASSERT_EQ(kept[i].size(), 64u);
    same += std::vector<int32_t>(kept[i].begin(), kept[i].begin() + 48) == selected[i] ? 1 : 0;
    EXPECT_LT(kept[i][47], 84);
    EXPECT_EQ(kept[i][48], kept[i].back() - 15);  // the last 16 positions
    EXPECT_GE(kept[i].back(), 200);
  }
  EXPECT_GE(same, 16) << "of 20 (layer, KV head) pairs";
}

// stories260K's 5 layers under pyramid=8 of a heavy part of 16 (kv/pyramid.h):
// top 2, bottom 30, so 30, 23, 16, 9, 2 heavy hitters plus the 16 recent.
const std::vector<int32_t> kPyramid16 = {46, 39, 32, 25, 18};

TEST(PolicyVariantsCli, H2oPyramidKeepsEachLayersBudgetAtTheSameMemory) {
  const std::vector<int32_t> ids = testing::ReadStream("s002.txt");
  const Simulated sim = SimulateH2o(ids, 16, 16, Score::kSum, 1.0, kPyramid16);
  const EngineRun run = Perplexity("h2o:heavy=16,recent=16,pyramid=8");
  ASSERT_EQ(run.kept.size(), 20u);
  for (size_t i = 0; i < run.kept.size(); ++i) {
    EXPECT_EQ(run.kept[i].size(), static_cast<size_t>(kPyramid16[i / 4])) << "layer " << i / 4;
  }
  EXPECT_GE(SameHeads(run.kept, sim.kept), 16);
  EXPECT_NEAR(run.nll, sim.nll, 1e-2 * sim.nll);

  // The same K/V bytes as the flat budget; pyramid=1 is flat.
  const std::string ppl = "perplexity -m " + kModel + " --no-kl --json --token-file " + kStream + " --kv ";
  const auto flat = RunH2o(ppl + "h2o:heavy=16,recent=16");
  const auto pyramid = RunH2o(ppl + "h2o:heavy=16,recent=16,pyramid=8");
  const auto one = RunH2o(ppl + "h2o:heavy=16,recent=16,pyramid=1");
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  ASSERT_EQ(pyramid.exit_code, 0) << pyramid.err;
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto f = nlohmann::json::parse(flat.out)["policies"][0];
  const auto p = nlohmann::json::parse(pyramid.out)["policies"][0];
  const auto o = nlohmann::json::parse(one.out)["policies"][0];
  EXPECT_EQ(p["kv_bytes"], f["kv_bytes"]);
  EXPECT_EQ(p["kv_bytes_full"], f["kv_bytes_full"]);
  EXPECT_EQ(o["nll_sum"], f["nll_sum"]);
  EXPECT_NE(p["nll_sum"], f["nll_sum"]);
  EXPECT_EQ(p["kv"], "h2o:heavy=16,recent=16,pyramid=8");
}

TEST(PolicyVariantsCli, SnapKvPyramidSelectsEachLayersShare) {
  // budget 32, window 16: a selected part of 16 per layer, as above.
  const std::vector<int32_t> prompt = testing::ReadStreamPrefix("s002.txt", 200);
  const auto selected = SimulateSnapKvSelection(prompt, 200, 32, 16, 7, kPyramid16);
  const auto kept = GenerateKept(prompt, "snapkv:budget=32,window=16,pyramid=8");
  ASSERT_EQ(kept.size(), selected.size());
  int32_t same = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    ASSERT_EQ(kept[i].size(), static_cast<size_t>(kPyramid16[i / 4])) << "layer " << i / 4;
    same += std::vector<int32_t>(kept[i].begin(), kept[i].end() - 16) == selected[i] ? 1 : 0;
  }
  EXPECT_GE(same, 16) << "of 20 (layer, KV head) pairs";
}

}  // namespace
}  // namespace h2o
