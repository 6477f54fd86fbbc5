// `h2o perplexity` beyond one policy: the windowed mode against windows
// built here and scored by the plain streaming mode, the KL columns, the
// policy x budget sweep and its files, and the errors of each.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli/run_binary.h"
#include "test_data.h"
#include "xml_check.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();
const std::string kS001 = testing::DataPath("stories260K/streams/s001.txt");  // 170 ids
const std::string kS003 = testing::DataPath("stories260K/streams/s003.txt");  // 234 ids

class PerplexityCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("h2o_ppl_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

nlohmann::json RunJson(const std::string& args) {
  const auto r = RunH2o("perplexity -m " + kModel + " --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// llama-perplexity's method, built by hand: s001 and s003 joined (404 ids)
// make 6 windows of 64 (the last 20 ids dropped), each with BOS (1) first;
// streaming mode scores each window file, and the second half of its
// predictions (32..62) is summed here.
TEST_F(PerplexityCli, WindowedEqualsSecondHalvesOfHandBuiltWindows) {
  std::vector<int32_t> all = testing::ReadStream("s001.txt");
  const std::vector<int32_t> s003 = testing::ReadStream("s003.txt");
  all.insert(all.end(), s003.begin(), s003.end());
  ASSERT_EQ(all.size(), 404u);
  const int n_ctx = 64, n_windows = 6;
  {
    std::ofstream windows(Path("windows.txt"));
    for (int w = 0; w < n_windows; ++w) {
      std::vector<int32_t> ids(all.begin() + w * n_ctx, all.begin() + (w + 1) * n_ctx);
      ids[0] = 1;
      windows << testing::JoinIds(ids) << "\n";
    }
  }
  // An absolute and a percent budget (10% of the 64-token window: 6).
  const std::string kv = " --kv full,h2o:heavy=8,recent=8,local:recent=10% --no-kl";
  const auto windowed = RunJson("--windowed -c 64" + kv + " --token-file " + kS001 + " " + kS003);
  const auto streamed = RunJson("--per-token" + kv + " --token-file " + Path("windows.txt"));
  ASSERT_EQ(windowed["mode"], "windowed");
  ASSERT_EQ(windowed["policies"].size(), 3u);
  ASSERT_EQ(streamed["policies"].size(), 3u);
  for (size_t p = 0; p < 3; ++p) {
    const auto& w = windowed["policies"][p];
    const auto& s = streamed["policies"][p];
    SCOPED_TRACE(w["kv"].get<std::string>());
    ASSERT_EQ(s["per_stream"].size(), static_cast<size_t>(n_windows));
    ASSERT_EQ(w["per_stream"].size(), static_cast<size_t>(n_windows));
    double sum = 0.0, sq = 0.0;
    int64_t count = 0;
    for (int i = 0; i < n_windows; ++i) {
      const auto nll = s["per_stream"][i]["nll"].get<std::vector<double>>();
      ASSERT_EQ(nll.size(), 63u);
      double window_sum = 0.0;
      for (int t = 32; t < 63; ++t) {
        window_sum += nll[t];
        sq += nll[t] * nll[t];
        ++count;
      }
      sum += window_sum;
      EXPECT_EQ(w["per_stream"][i]["tokens"], 31);
      EXPECT_NEAR(w["per_stream"][i]["nll_sum"].get<double>(), window_sum, 1e-9 * window_sum);
    }
    EXPECT_EQ(w["tokens"], count);
    EXPECT_NEAR(w["nll_sum"].get<double>(), sum, 1e-9 * sum);
    const double ppl = std::exp(sum / count);
    EXPECT_NEAR(w["ppl"].get<double>(), ppl, 1e-9 * ppl);
    const double mean = sum / count;
    const double err = std::sqrt((sq / count - mean * mean) / (count - 1)) * ppl;
    EXPECT_NEAR(w["ppl_err"].get<double>(), err, 1e-6 * err);
  }
  EXPECT_EQ(windowed["policies"][2]["per_stream"][0]["kv"], "local:recent=6");
}

TEST_F(PerplexityCli, WindowedNeedsAFullWindow) {
  std::ofstream(Path("short.txt")) << "1 2 3 4 5 6 7 8 9 10\n";
  ExpectOneErrorLine(
      RunH2o("perplexity -m " + kModel + " --windowed -c 64 --token-file " + Path("short.txt")),
      "at least one full window");
  ExpectOneErrorLine(RunH2o("perplexity -m " + kModel + " --windowed -c 2 --token-file " + kS001),
                     "-c of at least 3");
}

TEST_F(PerplexityCli, FullAgainstItselfHasNoDivergence) {
  const auto out = RunJson("--kv full --kl --token-file " + kS001);
  ASSERT_EQ(out["policies"].size(), 1u);
  EXPECT_EQ(out["policies"][0]["kl"].get<double>(), 0.0);
  EXPECT_EQ(out["policies"][0]["top1"].get<double>(), 1.0);
  // One policy: no comparison unless asked for.
  EXPECT_FALSE(RunJson("--kv full --token-file " + kS001)["policies"][0].contains("kl"));
}

// A lone policy with --kl gets its own full-cache reference session; in a
// list with full, the full row is the reference. Both give the same numbers.
TEST_F(PerplexityCli, OwnReferenceEqualsTheListsFullRow) {
  const auto alone = RunJson("--kv h2o:heavy=8,recent=8 --kl --token-file " + kS001 + " " + kS003);
  const auto listed = RunJson("--kv full,h2o:heavy=8,recent=8 --token-file " + kS001 + " " + kS003);
  ASSERT_EQ(listed["policies"].size(), 2u);
  const auto& a = alone["policies"][0];
  const auto& b = listed["policies"][1];
  EXPECT_GT(a["kl"].get<double>(), 0.0);
  EXPECT_EQ(a["kl"].get<double>(), b["kl"].get<double>());
  EXPECT_EQ(a["top1"].get<double>(), b["top1"].get<double>());
  EXPECT_EQ(a["nll_sum"].get<double>(), b["nll_sum"].get<double>());
  // The row's mean KL is the token-weighted mean of its streams'.
  double weighted = 0.0;
  for (const auto& s : a["per_stream"])
    weighted += s["kl"].get<double>() * s["tokens"].get<double>();
  EXPECT_NEAR(a["kl"].get<double>(), weighted / a["tokens"].get<double>(), 1e-12);
}

TEST_F(PerplexityCli, SweepRunsTheGridAndWritesItsFiles) {
  const std::string prefix = Path("sweep");
  const auto out = RunJson("--kv full,local,h2o --budget 10%,20% --out " + prefix +
                           " --token-file " + kS001 + " " + kS003);
  const std::vector<std::vector<std::string>> want = {
      {"full", "", "full"},
      {"local", "10%", "local:recent=10%"},
      {"local", "20%", "local:recent=20%"},
      {"h2o", "10%", "h2o:heavy=5%,recent=5%"},
      {"h2o", "20%", "h2o:heavy=10%,recent=10%"},
  };
  ASSERT_EQ(out["policies"].size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& row = out["policies"][i];
    EXPECT_EQ(row["policy"], want[i][0]);
    EXPECT_EQ(row["budget"],
              want[i][1].empty() ? nlohmann::json(nullptr) : nlohmann::json(want[i][1]));
    EXPECT_EQ(row["kv"], want[i][2]);
  }
  // local at 10% of s001's 170 tokens keeps 17.
  EXPECT_EQ(out["policies"][1]["per_stream"][0]["kv"], "local:recent=17");
  // A grid cell is the same run as that spec on its own, up to rounding:
  // the grid's policies share each forward pass, and this model's f32
  // weights multiply a batch as a blocked product, a single row as a dot.
  const auto alone = RunJson("--kv local:recent=10% --token-file " + kS001 + " " + kS003);
  const double want_nll = alone["policies"][0]["nll_sum"].get<double>();
  EXPECT_NEAR(out["policies"][1]["nll_sum"].get<double>(), want_nll, 1e-5 * want_nll);

  const std::string md = testing::ReadFileOrEmpty(prefix + ".md");
  EXPECT_NE(md.find("| policy | 10% | 20% |"), std::string::npos) << md;
  EXPECT_NE(md.find("### kl:"), std::string::npos) << md;
  const std::string csv = testing::ReadFileOrEmpty(prefix + ".csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "policy,budget,kv,ppl,kl,top1");
  const auto json = nlohmann::json::parse(testing::ReadFileOrEmpty(prefix + ".json"));
  ASSERT_EQ(json["rows"].size(), 5u);
  EXPECT_EQ(json["rows"][3]["values"]["ppl"], out["policies"][3]["ppl"]);
  // One plot per metric, a line per policy (full, local, h2o).
  for (const std::string name : {".svg", ".kl.svg", ".top1.svg"}) {
    const std::string svg = testing::ReadFileOrEmpty(prefix + name);
    EXPECT_EQ(testing::XmlProblem(svg), "") << name;
    EXPECT_EQ(testing::Count(svg, "class=\"series\""), 3u) << name;
  }
}

TEST_F(PerplexityCli, SeveralPoliciesPrintOneTableRowEach) {
  const auto r =
      RunH2o("perplexity -m " + kModel + " --kv full,local:recent=8 --token-file " + kS001);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| kv | ppl | kl | top1 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| full |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| local:recent=8 |"), std::string::npos) << r.out;
}

TEST_F(PerplexityCli, ListAndSweepErrorsAreOneLine) {
  const std::string base = "perplexity -m " + kModel + " --token-file " + kS001 + " ";
  ExpectOneErrorLine(RunH2o(base + "--kv full,bogus --budget 10%"), "unknown KV policy 'bogus'");
  ExpectOneErrorLine(RunH2o(base + "--kv h2o --budget 10x"), "bad budget '10x'");
  ExpectOneErrorLine(RunH2o(base + "--kv h2o:heavy=4,recent=4 --budget 10%"), "sets 'heavy'");
  ExpectOneErrorLine(RunH2o(base + "--kv full,h2o:heavy=0,recent=0"), "at least 1");
  ExpectOneErrorLine(RunH2o(base + "--kv full,local:heavy=3"), "unknown key 'heavy'");
  ExpectOneErrorLine(RunH2o(base + "--kv full,local:recent=4 --kv-dump " + Path("d.json")),
                     "--kv-dump takes a single");
  // Checked before the run, not after it.
  ExpectOneErrorLine(RunH2o(base + "--kv full --out " + Path("missing/x")),
                     "missing/x.json: directory " + Path("missing") + " does not exist");
}

}  // namespace
}  // namespace h2o
