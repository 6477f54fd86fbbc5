// `h2o mktask ruler` and `h2o eval` on its items through the real binary,
// on the bundled model (which retrieves nothing: these check the mechanics,
// the files and the errors; tests/eval/ruler_test.cc checks the items).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.h"
#include "test_data.h"
#include "xml_check.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();

std::string Temp(const std::string& name) { return ::testing::TempDir() + name; }

std::vector<nlohmann::json> Lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(testing::ReadFileOrEmpty(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// Four items: niah_single_1 and passkey at 512 tokens, needles at 0% and 100%.
std::string MakeTasks(const std::string& name, int seed = 3) {
  const std::string path = Temp(name);
  const auto r = RunH2o(fmt::format(
      "mktask ruler -m {} --tasks niah_single_1,passkey --ctx 512 --depths 0,100 -n 1 -s {} "
      "-o {}",
      kModel, seed, path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 4 items (2 tasks x 1 lengths x 2 depths x 1)"), std::string::npos)
      << r.err;
  return path;
}

TEST(RulerCli, MktaskWritesSeededItemsThatFitTheirLength) {
  const std::string path = MakeTasks("ruler_a.jsonl");
  const std::vector<nlohmann::json> items = Lines(path);
  ASSERT_EQ(items.size(), 4u);
  for (const nlohmann::json& item : items) {
    EXPECT_EQ(item["length"], 512);
    EXPECT_LE(item["n_tokens"].get<int>() + item["max_tokens"].get<int>(), 512);
    EXPECT_FALSE(item["outputs"].empty());
    for (const char* key : {"task", "context", "question", "depth"}) {
      EXPECT_TRUE(item.contains(key)) << key;
    }
  }
  EXPECT_EQ(items[0]["depth"], 0.0);
  EXPECT_EQ(items[1]["depth"], 100.0);
  EXPECT_EQ(testing::ReadFileOrEmpty(MakeTasks("ruler_b.jsonl")), testing::ReadFileOrEmpty(path));
  EXPECT_NE(testing::ReadFileOrEmpty(MakeTasks("ruler_c.jsonl", 4)),
            testing::ReadFileOrEmpty(path));
}

TEST(RulerCli, MktaskErrors) {
  const std::string out = "-o " + Temp("ruler_bad.jsonl");
  const std::string m = "mktask ruler -m " + kModel + " ";
  ExpectUsageError(RunH2o(m + "--tasks niah_single_9 " + out),
                   "unknown task 'niah_single_9' (tasks: niah_single_1");
  ExpectUsageError(RunH2o(m + "--ctx 2x " + out), "'2x' is not a length in tokens");
  ExpectUsageError(RunH2o(m + "--depths 150 " + out), "'150' is not a depth in percent");
  ExpectUsageError(RunH2o(m + "--haystack /nonexistent/essay.txt " + out), "--haystack");
  ExpectUsageError(RunH2o("mktask babi -m " + kModel + " " + out), "babi");
  const std::string tiny = Temp("ruler_tiny.txt");
  std::ofstream(tiny) << "Too few words to hide a needle in.";
  ExpectOneErrorLine(RunH2o(m + "--tasks niah_single_2 --haystack " + tiny + " " + out),
                     "an essay haystack needs at least 1000");
  ExpectOneErrorLine(RunH2o(m + "--tasks niah_single_1 --ctx 100 " + out),
                     "a 100-token item of task niah_single_1 cannot be made");
}

TEST(RulerCli, EvalPrintsEachPolicyAndWritesTheReports) {
  const std::string tasks = MakeTasks("ruler_eval.jsonl");
  const std::string prefix = Temp("ruler_report");
  const auto r = RunH2o(
      fmt::format("eval -m {} --task {} -t 2 --kv full,h2o,local --budget 25%,50% --report {}",
                  kModel, tasks, prefix));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 items, retrieval, query-agnostic (question after compression), "
                       "compressed part in one pass"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("compression"), std::string::npos);
  EXPECT_NE(r.out.find("0.750"), std::string::npos);  // kvpress's ratio at 25% kept
  const nlohmann::json report = nlohmann::json::parse(testing::ReadFileOrEmpty(prefix + ".json"));
  const nlohmann::json& meta = report["meta"];
  EXPECT_EQ(meta["protocol"], "query-agnostic");
  EXPECT_EQ(meta["format"], "retrieval");
  EXPECT_EQ(meta["chunk"], "one pass");
  EXPECT_EQ(meta["cells"].size(), 10u);  // 5 runs x 2 tasks at one length
  for (const nlohmann::json& row : report["rows"]) {
    const nlohmann::json& v = row["values"];
    EXPECT_GE(v["accuracy"].get<double>(), 0.0);
    EXPECT_LE(v["accuracy"].get<double>(), 1.0);
    EXPECT_TRUE(v.contains("niah_single_1") && v.contains("passkey") && v.contains("len_512"));
  }
  EXPECT_EQ(report["rows"].size(), 5u);  // full once, h2o and local at two budgets
  EXPECT_NE(testing::ReadFileOrEmpty(prefix + ".tasks.md").find("niah_single_1 @512"),
            std::string::npos);
  // Every answer, 4 items x 5 runs, each scored as the table counts it.
  const std::vector<nlohmann::json> answers = Lines(prefix + ".answers.jsonl");
  ASSERT_EQ(answers.size(), 20u);
  double local_25 = 0;
  for (const nlohmann::json& a : answers) {
    EXPECT_TRUE(a["answer"].is_string() && a["outputs"].size() == 1u) << a;
    const bool found = a["answer"].get<std::string>().find(a["outputs"][0].get<std::string>()) !=
                       std::string::npos;
    EXPECT_EQ(a["score"].get<double>(), found ? 1.0 : 0.0) << a;
    if (a["kv"] == "local" && a["budget"] == "25%") local_25 += a["score"].get<double>() / 4;
  }
  for (const nlohmann::json& row : report["rows"]) {
    if (row["kv"] == "local" && row["budget"] == "25%") {
      EXPECT_DOUBLE_EQ(row["values"]["accuracy"].get<double>(), local_25);
    }
  }
  for (const std::string& svg : {prefix + ".svg", prefix + ".depth.h2o.25_.svg"}) {
    const std::string text = testing::ReadFileOrEmpty(svg);
    EXPECT_NE(text.find("<svg"), std::string::npos) << svg;
    EXPECT_EQ(testing::XmlProblem(text), "") << svg;
  }
  // Query-aware, streamed in 64-token passes.
  const auto aware = RunH2o(fmt::format(
      "eval -m {} --task {} -t 2 --kv full,snapkv:budget=64,window=16 --question-in-context "
      "--chunk 64 --json",
      kModel, tasks));
  ASSERT_EQ(aware.exit_code, 0) << aware.err;
  const nlohmann::json a = nlohmann::json::parse(aware.out);
  EXPECT_EQ(a["protocol"], "query-aware");
  EXPECT_EQ(a["chunk"], 64);
  EXPECT_EQ(a["results"].size(), 2u);
}

// The tokens of an item's context, BOS first, by `h2o tokenize`.
size_t ContextTokens(const nlohmann::json& item) {
  const std::string file = Temp("ruler_context.jsonl");
  std::ofstream(file) << nlohmann::json{{"text", item["context"]}} << "\n";
  const auto r = RunH2o(fmt::format("tokenize -m {} --jsonl {} -q", kModel, file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out).size();
}

// Every position the dump holds, over all layers and heads.
std::vector<int32_t> DumpedPositions(const std::string& path) {
  std::vector<int32_t> out;
  const nlohmann::json dump = nlohmann::json::parse(testing::ReadFileOrEmpty(path));
  for (const auto& layer : dump["layers"]) {
    for (const auto& head : layer["heads"]) {
      for (const auto& pos : head["positions"]) out.push_back(pos.get<int32_t>());
    }
  }
  return out;
}

// Query-agnostic: when the question comes, the cache holds the last 25% of
// the context and no question token; query-aware: the window slid over
// the question too.
TEST(RulerCli, KvDumpShowsTheQuestionComesAfterCompression) {
  const std::string tasks = MakeTasks("ruler_dump.jsonl");
  const nlohmann::json last = Lines(tasks).back();
  const std::string one = Temp("ruler_dump_one.jsonl");
  std::ofstream(one) << last.dump() << "\n";
  const size_t context = ContextTokens(last);
  const size_t kept = (context + 2) / 4;  // 25%, rounded
  const std::string dump = Temp("ruler_dump.kv.json");
  ASSERT_EQ(RunH2o(fmt::format("eval -m {} --task {} --kv local --budget 25% --kv-dump {} -q",
                               kModel, one, dump))
                .exit_code,
            0);
  std::vector<int32_t> positions = DumpedPositions(dump);
  ASSERT_FALSE(positions.empty());
  const auto [lo, hi] = std::minmax_element(positions.begin(), positions.end());
  EXPECT_NEAR(*hi, static_cast<double>(context) - 1, 1.0);
  EXPECT_NEAR(*lo, static_cast<double>(context - kept), 1.0);
  ASSERT_EQ(RunH2o(fmt::format("eval -m {} --task {} --kv local --budget 25% --kv-dump {} "
                               "--question-in-context -q",
                               kModel, one, dump))
                .exit_code,
            0);
  positions = DumpedPositions(dump);
  EXPECT_GT(*std::max_element(positions.begin(), positions.end()), static_cast<int32_t>(context));
  testing::ExpectOneErrorLine(
      RunH2o(fmt::format("eval -m {} --task {} --kv full,local --budget 25% --kv-dump {}", kModel,
                         one, dump)),
      "--kv-dump takes a single --kv spec");
}

TEST(RulerCli, EvalErrors) {
  const std::string tasks = MakeTasks("ruler_err.jsonl");
  ExpectOneErrorLine(RunH2o(fmt::format("eval -m {} --task {} -c 256", kModel, tasks)),
                     "pass the context of 256 tokens");
  ExpectOneErrorLine(
      RunH2o(fmt::format("eval -m {} --task {} --kv h2o --budget 0.01%", kModel, tasks)),
      "KV budget must be at least 1 token");
  ExpectOneErrorLine(RunH2o(fmt::format("eval -m {} --task {} --question-in-context", kModel,
                                        testing::DataPath("tinystories_cloze_56.jsonl"))),
                     "--question-in-context applies to retrieval tasks, not multiple-choice");
  const std::string broken = Temp("ruler_broken.jsonl");
  std::ofstream(broken) << R"({"task": "x", "context": "a b c", "question": " d?", "outputs": []})"
                        << "\n";
  ExpectOneErrorLine(RunH2o(fmt::format("eval -m {} --task {}", kModel, broken)),
                     "'outputs' must list what an answer contains");
}

}  // namespace
}  // namespace h2o
