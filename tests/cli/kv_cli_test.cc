// KV options through the real binary: memory bounds, pos-shift past the
// trained context, the dump file, and errors for bad specs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
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
  // of metadata (position, score, free-list entry) for each of the 64 + 1
  // slots of a layer and KV head.
  const int64_t rows = kLayers * kKvHeads * 64 + kKvHeads;
  const int64_t row_bytes = 2 * kHeadDim * 2;
  EXPECT_LE(out["kv_bytes"].get<int64_t>(), rows * row_bytes + kLayers * kKvHeads * 65 * 32);
  EXPECT_GE(out["kv_bytes"].get<int64_t>(), rows * row_bytes);
  // A full cache of the 512 tokens, counted as the policy's own: K/V rows
  // and each slot's position and free-list entry (8 B).
  EXPECT_EQ(out["kv_bytes_full"].get<int64_t>(),
            kLayers * kKvHeads * 512 * (2 * kHeadDim * 2 + 8));
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
  // Trained context 512; the GGUF's context_length is 2048. 2048 new
  // tokens after BOS pass it, so without pos-shift this is refused.
  const std::string base = "generate -m " + kModel + " --tokens 1 -n 2048 --temp 0 --print-ids ";
  const auto refused = RunH2o(base + "--kv sink:sinks=4,recent=124");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("context"), std::string::npos) << refused.err;

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
  const auto r = RunH2o("generate -m " + kModel +
                        " --tokens 1 -n 600 -c 256 --temp 0 --kv h2o:heavy=32,recent=32 --kv-pos-shift --print-ids");
  ASSERT_EQ(r.exit_code, 0) << r.err;
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

TEST(KvCli, SameSeedRandomPolicyIsReproducible) {
  const std::string cmd = "generate -m " + kModel + " --tokens 1 -n 80 --temp 0 --print-ids --kv random:k=8,recent=8,seed=";
  const auto a = RunH2o(cmd + "3");
  const auto b = RunH2o(cmd + "3");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(KvCli, TovaRuns) {
  const auto r = RunH2o("perplexity -m " + kModel + " --kv tova:k=32 --json --token-file " + kStream512);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out)["policies"][0];
  EXPECT_TRUE(std::isfinite(out["ppl"].get<double>()));
}


TEST(KvCliErrors, BadSpecs) {
  const std::string base = "generate -m " + kModel + " --tokens '1 2' -n 4 --kv ";
  ExpectOneErrorLine(RunH2o(base + "h3o:heavy=4"), "unknown KV policy 'h3o'");
  ExpectOneErrorLine(RunH2o(base + "local:heavy=4"), "unknown key 'heavy'");
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=4"), "missing key 'recent'");
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=-3,recent=4"), "-3");
  ExpectOneErrorLine(RunH2o(base + "h2o:heavy=0,recent=0"), "at least 1");
  ExpectOneErrorLine(RunH2o(base + "local:recent=8 --kv-pos-shift"), "--kv-pos-shift");
  ExpectOneErrorLine(RunH2o("inspect " + kModel + " --kv tova"), "missing key 'k'");
}

}  // namespace
}  // namespace h2o
