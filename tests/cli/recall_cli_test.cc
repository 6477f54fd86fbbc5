// The long-context suite on models/recall.gguf, the model trained to
// retrieve (tools/train/): the full cache answers a small fixed set of
// needle items, and `local` at 25% fails the needles it provably evicted.
// Thresholds come from the model's measured accuracy (models/README.md),
// with room for one item, not from a decree of 100%. The items are made by
// the suite's generator at a fixed seed, so a model that answers nothing
// (every earlier training run) fails the first test.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::RunH2o;

const std::string kRecall = std::string(H2O_MODELS_DIR) + "/recall.gguf";

std::string Temp(const std::string& name) { return ::testing::TempDir() + name; }

std::string MakeTasks(const std::string& name, const std::string& tasks, const std::string& ctx,
                      const std::string& depths, int n) {
  const std::string path = Temp(name);
  const auto r = RunH2o(fmt::format("mktask ruler -m {} --tasks {} --ctx {} --depths {} -n {} -s 11 "
                                    "-o {} -q",
                                    kRecall, tasks, ctx, depths, n, path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

// {policy: accuracy} of one eval.
std::map<std::string, double> Accuracy(const std::string& tasks, const std::string& flags) {
  const auto r =
      RunH2o(fmt::format("eval -m {} --task {} -t 2 {} --json -q", kRecall, tasks, flags));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, double> out;
  if (r.exit_code != 0) return out;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& result : report["results"]) {
    out[result["policy"].get<std::string>()] = result["accuracy"].get<double>();
  }
  return out;
}

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

size_t Tokens(const std::string& text) {
  const std::string file = Temp("recall_text.jsonl");
  std::ofstream(file) << nlohmann::json{{"text", text}} << "\n";
  const auto r = RunH2o(fmt::format("tokenize -m {} --jsonl {} -q", kRecall, file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out).size();
}

TEST(RecallModel, FullCacheRetrievesNeedlesAtEveryDepth) {
  const std::string tasks = MakeTasks("recall_full.jsonl", "niah_single_1,passkey", "1k",
                                      "0,25,50,75,100", 2);
  ASSERT_EQ(Lines(tasks).size(), 20u);
  const auto accuracy = Accuracy(tasks, "--kv full");
  EXPECT_GE(accuracy.at("full"), 0.9);  // measured 20 of 20 (models/README.md)
}

// The model was trained to 2048 tokens: at 2k it still finds most needles.
TEST(RecallModel, FullCacheRetrievesMostNeedlesAtItsTrainedLength) {
  const std::string tasks = MakeTasks("recall_full_2k.jsonl", "niah_single_1,passkey", "2k",
                                      "0,25,50,75,100", 2);
  ASSERT_EQ(Lines(tasks).size(), 20u);
  const auto accuracy = Accuracy(tasks, "--kv full");
  EXPECT_GE(accuracy.at("full"), 0.7);  // measured 16 of 20
}

// Needles in the first half of the context; `local` at 25% keeps only the
// last quarter (checked in the dump: every kept position is past the
// needle), so it cannot answer, where the full cache does.
TEST(RecallModel, LocalFailsTheNeedlesItEvicted) {
  const std::string tasks =
      MakeTasks("recall_local.jsonl", "niah_single_1,passkey", "1k", "0,20,40", 2);
  const auto accuracy = Accuracy(tasks, "--kv full,local --budget 25%");
  EXPECT_GE(accuracy.at("full"), 0.8);  // measured 11 of 12
  EXPECT_EQ(accuracy.at("local"), 0.0);

  const nlohmann::json last = Lines(tasks).back();  // passkey at depth 40
  const std::string one = Temp("recall_local_one.jsonl");
  std::ofstream(one) << last.dump() << "\n";
  const std::string dump = Temp("recall_local.kv.json");
  ASSERT_EQ(RunH2o(fmt::format("eval -m {} --task {} --kv local --budget 25% --kv-dump {} -q",
                               kRecall, one, dump))
                .exit_code,
            0);
  const std::string context = last["context"].get<std::string>();
  const std::string key = last["outputs"][0].get<std::string>();
  const size_t needle_end = Tokens(context.substr(0, context.rfind(key) + key.size()));
  const nlohmann::json kept = nlohmann::json::parse(testing::ReadFileOrEmpty(dump));
  for (const auto& layer : kept["layers"]) {
    for (const auto& head : layer["heads"]) {
      for (const auto& pos : head["positions"]) {
        ASSERT_GT(pos.get<size_t>(), needle_end) << "a needle token was kept";
      }
    }
  }
}

}  // namespace
}  // namespace h2o
