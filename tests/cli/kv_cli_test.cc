// KV options through the real binary: memory bounds, pos-shift past the
// trained context, the dump file, and errors for bad specs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include "cli/run_binary.h"
#include "model/model.h"
#include "model/reference_forward.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();
const std::string kStream512 = testing::DataPath("stories260K/streams/s002.txt");  // 512 ids

// stories260K: 5 layers, 4 KV heads, head_dim 8.
constexpr int64_t kLayers = 5, kKvHeads = 4, kHeadDim = 8;

TEST(KvCli, BudgetBoundsTheAllocation) {
  ASSERT_EQ(testing::ReadStream("s002.txt").size(), 512u);
  const auto r = RunH2o("perplexity -m " + kModel +
                        " --kv h2o:heavy=32,recent=32 --chunk 1 --json --token-file " + kStream512);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out)["policies"][0];
  // f16 K and V rows for the 64-token budget of each layer and KV head plus
  // the 1-token chunk per KV head that the layers share; at most 32 bytes
  // of metadata (position, score, a freed-slot index) for each of the 64 + 1
  // slots of a layer and KV head.
  const int64_t rows = kLayers * kKvHeads * 64 + kKvHeads;
  const int64_t row_bytes = 2 * kHeadDim * 2;
  EXPECT_LE(out["kv_bytes"].get<int64_t>(), rows * row_bytes + kLayers * kKvHeads * 65 * 32);
  EXPECT_GE(out["kv_bytes"].get<int64_t>(), rows * row_bytes);
  // A full cache of the 512 tokens, counted as the policy's own: K/V rows
  // and each slot's position (4 B).
  EXPECT_EQ(out["kv_bytes_full"].get<int64_t>(),
            kLayers * kKvHeads * 512 * (2 * kHeadDim * 2 + 4));
  EXPECT_EQ(out["kv_full_row_bytes"].get<int64_t>(), 2 * kLayers * kKvHeads * 512 * kHeadDim * 2);
}

TEST(KvCli, PercentBudgetsFollowEachStream) {
  // 10% + 10% of a 512-token stream: floor(51.2) twice.
  const auto r = RunH2o("perplexity -m " + kModel +
                        " --kv h2o:heavy=10%,recent=10% --json --token-file " + kStream512);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out)["policies"][0];
  EXPECT_EQ(out["per_stream"][0]["kv"], "h2o:heavy=51,recent=51");
}

TEST(KvCli, PosShiftGeneratesFourTimesTheTrainedContext) {
  // Trained context 512, as the GGUF says. 2048 new tokens after BOS pass
  // it, so without pos-shift generation stops at the context's end: 511
  // tokens after BOS.
  const std::string base = "generate -m " + kModel + " --tokens 1 -n 2048 --temp 0 --print-ids ";
  const auto stopped = RunH2o(base + "--kv sink:sinks=4,recent=124");
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("-n 2048: the context size 512 holds 511 tokens"), std::string::npos)
      << stopped.err;
  std::istringstream stopped_ids(stopped.out);
  int64_t n_stopped = 0;
  for (int id; stopped_ids >> id;) ++n_stopped;
  EXPECT_EQ(n_stopped, 512);

  const auto r = RunH2o(base + "--kv sink:sinks=4,recent=124 --kv-pos-shift");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream ids(r.out);
  int64_t n = 0;
  int id;
  while (ids >> id) ++n;
  EXPECT_EQ(n, 2049);

  // Its perplexity, scored with the same cache, stays finite.
  const auto dir = std::filesystem::temp_directory_path() / ("h2o_posshift_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string stream = (dir / "long.txt").string();
  std::ofstream(stream) << r.out;
  const auto p = RunH2o("perplexity -m " + kModel +
                        " --kv sink:sinks=4,recent=124 --kv-pos-shift --json --token-file " + stream);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto out = nlohmann::json::parse(p.out)["policies"][0];
  EXPECT_EQ(out["tokens"], 2048);
  EXPECT_TRUE(std::isfinite(out["ppl"].get<double>()));
  EXPECT_GT(out["ppl"].get<double>(), 1.0);
}

TEST(KvCli, H2oPosShiftAlsoRuns) {
  // Without eviction every rank is the position: bit for bit the full
  // cache, so the same NLL to the last digit. f32 K/V: with f16 the shifted
  // keys are stored before RoPE and rotated after rounding, the others
  // rounded after it, so the two differ by f16 rounding (0.001%).
  const std::string ppl = "perplexity -m " + kModel + " --json --no-kl --kv-type f32 --token-file " + kStream512;
  const auto full = RunH2o(ppl + " --kv full");
  const auto shifted = RunH2o(ppl + " --kv h2o:heavy=300,recent=300 --kv-pos-shift");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(shifted.exit_code, 0) << shifted.err;
  EXPECT_EQ(nlohmann::json::parse(full.out)["policies"][0]["nll_sum"],
            nlohmann::json::parse(shifted.out)["policies"][0]["nll_sum"]);

  // With eviction, past the context: the rank positions are checked
  // against a simulation in policy_simulation_test.cc; here, that the
  // binary generates all 600 tokens.
  const auto r = RunH2o("generate -m " + kModel +
                        " --tokens 1 -n 600 -c 256 --temp 0 --kv h2o:heavy=32,recent=32 --kv-pos-shift --print-ids");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream ids(r.out);
  int64_t n = 0;
  for (int id; ids >> id;) ++n;
  EXPECT_EQ(n, 601);
}

TEST(KvCli, DumpListsBudgetTokensPerHead) {
  const auto dir = std::filesystem::temp_directory_path() / ("h2o_dump_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dump = (dir / "kv.json").string();
  const auto r = RunH2o("generate -m " + kModel + " --tokens 1 -n 100 --temp 0 --kv h2o:heavy=8,recent=8 --kv-dump " + dump);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(testing::ReadFileOrEmpty(dump));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(out["policy"], "h2o");
  ASSERT_EQ(out["layers"].size(), static_cast<size_t>(kLayers));
  for (const auto& layer : out["layers"]) {
    ASSERT_EQ(layer["heads"].size(), static_cast<size_t>(kKvHeads));
    for (const auto& head : layer["heads"]) {
      const auto pos = head["positions"].get<std::vector<int>>();
      ASSERT_EQ(pos.size(), 16u);
      EXPECT_TRUE(std::is_sorted(pos.begin(), pos.end()));
      // The recent window is the last 8 of the 100 fed tokens (positions 0..99).
      for (int i = 0; i < 8; ++i) EXPECT_EQ(pos[8 + i], 92 + i);
      for (double s : head["scores"].get<std::vector<double>>()) EXPECT_GT(s, 0.0);
    }
  }
}

// The random policy's kept positions of (layer 0, KV head 0) after a run.
std::vector<int> RandomKept(const std::string& seed) {
  const auto dir = std::filesystem::temp_directory_path() / ("h2o_seed_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dump = (dir / ("kv" + seed + ".json")).string();
  const auto r = RunH2o("generate -m " + kModel + " --tokens 1 -n 80 --temp 0 --kv random:k=8,recent=8,seed=" + seed +
                        " --kv-dump " + dump);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(testing::ReadFileOrEmpty(dump), nullptr, false);
  std::filesystem::remove_all(dir);
  if (out.is_discarded()) return {};
  return out["layers"][0]["heads"][0]["positions"].get<std::vector<int>>();
}

TEST(KvCli, RandomPolicySeedDecidesTheKeptSet) {
  const std::vector<int> a = RandomKept("3");
  ASSERT_EQ(a.size(), 16u);
  EXPECT_EQ(RandomKept("3"), a);
  // 8 of the 72 evictable positions: two seeds keeping the same 8 by chance
  // is a 1-in-10^10 event.
  EXPECT_NE(RandomKept("4"), a);
  // The recent window is the last 8 of the 80 fed positions either way.
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a[8 + i], 72 + i);
}

TEST(KvCli, TovaMatchesTheSimulation) {
  // The NLL of a double-precision forward that keeps, per layer and KV
  // head, the tokens TOVA's rule picks from its own attention. Within 1%,
  // the tolerance the independent reference uses for evicting policies:
  // a near tie can go the other way in float.
  const std::vector<int32_t> ids = testing::ReadStream("s002.txt");
  auto model = Model::Load(kModel);
  ASSERT_TRUE(model.ok());
  testing::ReferenceForward ref(**model);
  double nll = 0.0;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    const std::vector<double> logits = ref.Eval(std::span<const int32_t>(&ids[t], 1));
    ref.Evict(32, 0, testing::ReferenceForward::Victim::kLowestLast);
    const double max = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (double l : logits) sum += std::exp(l - max);
    nll += max + std::log(sum) - logits[ids[t + 1]];
  }
  const auto r = RunH2o("perplexity -m " + kModel + " --kv tova:k=32 --kv-type f32 --no-kl --json --token-file " + kStream512);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out)["policies"][0];
  EXPECT_EQ(out["tokens"], ids.size() - 1);
  EXPECT_NEAR(out["nll_sum"].get<double>(), nll, 1e-2 * nll);
}

TEST(KvCliErrors, BadSpecs) {
  const std::string base = "generate -m " + kModel + " --tokens '1 2' -n 4 --kv ";
  ExpectOneErrorLine(RunH2o(base + "h3o:heavy=4"), "unknown KV policy 'h3o'");
  ExpectOneErrorLine(RunH2o(base + "local:heavy=4"), "unknown key 'heavy'");
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=4"), "missing key 'recent'");
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=-3,recent=4"), "-3");
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=0,recent=0"), "at least 1");
  ExpectOneErrorLine(RunH2o(base + "local:recent=8 --kv-pos-shift"), "--kv-pos-shift");
  // A policy without a budget gets 20% of what the cache holds (inspect:
  // the model's 512-token context).
  const testing::RunResult tova = RunH2o("inspect " + kModel + " --kv tova");
  EXPECT_EQ(tova.exit_code, 0) << tova.err;
  EXPECT_NE(tova.out.find("KV cache (tova:k=102, f16)"), std::string::npos) << tova.out;
}

// --kv-keep 4: positions 0..3 stay in every head on top of the budget of
// 16, whose recent window is still the last 8; -1 pins the whole prompt.
TEST(KvCli, KvKeepPinsTheFirstTokensInEveryHead) {
  const auto dir = std::filesystem::temp_directory_path() / ("h2o_keep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dump = (dir / "kv.json").string();
  const std::string prompt = " --tokens '" + std::string("1 5 9 13 17 21 25 29") + "'";
  auto r = RunH2o("generate -m " + kModel + prompt +
                  " -n 100 --temp 0 --kv h2o:heavy=8,recent=8 --kv-keep 4 --kv-dump " + dump);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = nlohmann::json::parse(testing::ReadFileOrEmpty(dump));
  EXPECT_EQ(out["budget"], 20);
  for (const auto& layer : out["layers"]) {
    for (const auto& head : layer["heads"]) {
      const auto pos = head["positions"].get<std::vector<int>>();
      ASSERT_EQ(pos.size(), 20u);
      for (int i = 0; i < 4; ++i) EXPECT_EQ(pos[i], i);
      // 8 prompt tokens and 99 generated ones fed: positions 0..106.
      for (int i = 0; i < 8; ++i) EXPECT_EQ(pos[12 + i], 99 + i);
    }
  }
  r = RunH2o("generate -m " + kModel + prompt +
             " -n 100 --temp 0 --kv h2o:heavy=8,recent=8 --kv-keep -1 --kv-dump " + dump);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = nlohmann::json::parse(testing::ReadFileOrEmpty(dump));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(out["budget"], 24);
  const auto pos = out["layers"][0]["heads"][0]["positions"].get<std::vector<int>>();
  ASSERT_EQ(pos.size(), 24u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(pos[i], i);
}

TEST(KvCliErrors, KvKeepBeyondThePromptOrTheBudget) {
  const std::string base = "generate -m " + kModel + " --tokens '1 2 3' -n 4 --kv ";
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=4,recent=4 --kv-keep 4"),
                     "--kv-keep: 4 tokens is more than the prompt's 3");
  const std::string longer = "generate -m " + kModel + " --tokens '1 2 3 4 5 6 7 8 9 10' -n 4 --kv ";
  ExpectOneErrorLine(RunH2o(longer + "h2o:heavy=2,recent=2 --kv-keep 5"),
                     "keep=5 pins more tokens than the policy's budget of 4");
  ExpectOneErrorLine(RunH2o(longer + "h2o:heavy=2,recent=2,keep=1 --kv-keep 2"), "give one of them");
  ExpectUsageError(RunH2o(longer + "h2o:heavy=2,recent=2 --kv-keep -2"),
                   "must be a token count, or -1 for the whole prompt");
}

}  // namespace
}  // namespace h2o
