// Every policy and budget of the independent reference (tests/data/
// stories260K, DESIGN.md section 3), checked through the real `h2o`
// binary: per-stream NLL within 1% (full within 0.1%), greedy ids exact.
// NLL runs use f32 K/V like the double-precision reference: f16 rounding
// flips near-tied eviction choices, which h2only (no recent window) turns
// into several percent.
#include <gtest/gtest.h>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::RunH2o;

// The reference names sink's sink count "heavy".
std::string SpecOf(const nlohmann::json& row) {
  const std::string policy = row["policy"];
  const int heavy = row["heavy"], recent = row["recent"];
  if (policy == "full") return "full";
  if (policy == "local") return "local:recent=" + std::to_string(recent);
  if (policy == "sink") return "sink:sinks=" + std::to_string(heavy) + ",recent=" + std::to_string(recent);
  if (policy == "h2only") return "h2only:heavy=" + std::to_string(heavy);
  return policy + ":heavy=" + std::to_string(heavy) + ",recent=" + std::to_string(recent);
}

std::vector<nlohmann::json> Rows(const std::string& file) {
  std::vector<nlohmann::json> rows;
  for (const auto& r : testing::ReadJson(file)) rows.push_back(r);
  return rows;
}

std::string TestName(const nlohmann::json& row, size_t index) {
  std::string name = SpecOf(row) + "_" + std::to_string(index);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// The rows as `--kv` lists, a few rows per run (so ctest can run the
// groups in parallel): the multi-policy output must reproduce every row.
class NllParity : public ::testing::TestWithParam<std::pair<size_t, size_t>> {};

TEST_P(NllParity, RowsFromOneMultiPolicyRun) {
  const std::vector<nlohmann::json> all = Rows("stories260K/reference_nll.json");
  const auto [begin, end] = GetParam();
  ASSERT_LE(end, all.size());
  const std::vector<nlohmann::json> refs(all.begin() + begin, all.begin() + end);
  std::string specs, files;
  for (const auto& ref : refs) specs.append(specs.empty() ? "" : ",").append(SpecOf(ref));
  for (const auto& s : refs[0]["per_stream"]) {
    files.append(" ").append(testing::DataPath("stories260K/streams/" + s["stream"].get<std::string>()));
  }
  const auto r = RunH2o("perplexity -m " + testing::ModelPath() + " --kv '" + specs +
                        "' --no-kl --kv-type f32 --json --token-file" + files);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out["policies"].size(), refs.size());
  for (size_t p = 0; p < refs.size(); ++p) {
    const nlohmann::json& ref = refs[p];
    const nlohmann::json& row = out["policies"][p];
    SCOPED_TRACE(SpecOf(ref));
    const double tolerance = ref["policy"] == "full" ? 1e-3 : 1e-2;
    EXPECT_EQ(row["kv"], SpecOf(ref));
    EXPECT_EQ(row["policy"], ref["policy"]);
    EXPECT_EQ(row["tokens"], ref["tokens"]);
    ASSERT_EQ(row["per_stream"].size(), ref["per_stream"].size());
    for (size_t i = 0; i < ref["per_stream"].size(); ++i) {
      EXPECT_EQ(row["per_stream"][i]["stream"], ref["per_stream"][i]["stream"]);
      const double want = ref["per_stream"][i]["nll_sum"];
      EXPECT_NEAR(row["per_stream"][i]["nll_sum"].get<double>(), want, tolerance * want)
          << ref["per_stream"][i]["stream"];
    }
    const double want_total = ref["nll_sum"];
    EXPECT_NEAR(row["nll_sum"].get<double>(), want_total, tolerance * want_total);
  }
}

// Every row of the 15 in reference_nll.json, in four runs.
INSTANTIATE_TEST_SUITE_P(Reference, NllParity,
                         ::testing::Values(std::pair<size_t, size_t>{0, 4},
                                           std::pair<size_t, size_t>{4, 8},
                                           std::pair<size_t, size_t>{8, 12},
                                           std::pair<size_t, size_t>{12, 15}),
                         [](const auto& info) {
                           return "Rows" + std::to_string(info.param.first) + "To" +
                                  std::to_string(info.param.second - 1);
                         });

TEST(NllParityData, FifteenRowsOverTheSameStreams) {
  const std::vector<nlohmann::json> all = Rows("stories260K/reference_nll.json");
  ASSERT_EQ(all.size(), 15u);  // the groups above cover exactly these
  auto names = [](const nlohmann::json& row) {
    std::vector<std::string> n;
    for (const auto& s : row["per_stream"]) n.push_back(s["stream"]);
    return n;
  };
  for (const auto& ref : all) EXPECT_EQ(names(ref), names(all[0])) << SpecOf(ref);
}

class GreedyParity : public ::testing::TestWithParam<nlohmann::json> {};

TEST_P(GreedyParity, IdsMatchExactly) {
  const nlohmann::json& c = GetParam();
  const std::string prompt = testing::JoinIds(c["prompt"].get<std::vector<int32_t>>());
  const std::string expected = testing::JoinIds(c["expected_ids"].get<std::vector<int32_t>>());
  const auto r = RunH2o("generate -m " + testing::ModelPath() + " --kv " + SpecOf(c) +
                        " --tokens '" + prompt + "' -n " + std::to_string(c["n_predict"].get<int>()) +
                        " --temp 0 --print-ids");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected + "\n");
}

INSTANTIATE_TEST_SUITE_P(Reference, GreedyParity,
                         ::testing::ValuesIn(Rows("stories260K/reference_greedy.json")),
                         [](const auto& info) { return TestName(info.param, info.index); });

}  // namespace
}  // namespace h2o
