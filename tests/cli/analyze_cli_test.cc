// `h2o analyze` as a user runs it on stories260K: the JSON report's schema
// and invariants, the SVG files, the summary, and one error line for each
// kind of bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/run_binary.h"
#include "model/model.h"
#include "model/reference_forward.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

// A fresh, empty directory path for one test (not created).
std::string OutDir(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("h2o_analyze_{}_{}", ::getpid(), name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::string Analyze(const std::string& args) {
  return fmt::format("analyze -m {} -t 2 --quiet {}", testing::ModelPath(), args);
}

std::string S001() { return testing::DataPath("stories260K/streams/s001.txt"); }

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// An SVG document as the plot helper writes it, with n_series lines.
void ExpectSvg(const std::string& path, size_t n_series) {
  const std::string svg = testing::ReadFileOrEmpty(path);
  ASSERT_FALSE(svg.empty()) << path;
  EXPECT_TRUE(svg.starts_with("<?xml") || svg.starts_with("<svg")) << path;
  EXPECT_NE(svg.find("</svg>"), std::string::npos) << path;
  EXPECT_EQ(Count(svg, "<g class=\"series\""), n_series) << path;
  EXPECT_EQ(Count(svg, "<g"), Count(svg, "</g>")) << path;
  // The plot helper's own tests check well-formedness in depth; here an
  // independent parser checks the files as written, where one is installed.
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    EXPECT_EQ(std::system(fmt::format("xmllint --noout '{}'", path).c_str()), 0) << path;
  }
}

TEST(AnalyzeCli, ReportOfAStoryHasTheSchemaAndItsInvariants) {
  const std::string out = OutDir("report");
  const auto r = RunH2o(Analyze(fmt::format("--token-file {} --out {}", S001(), out)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sparsity"), std::string::npos) << r.out;
  // "wrote PATH" lines go to stderr, and --quiet keeps them off (wrote_cli_test.cc).
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("wrote"), std::string::npos) << r.err;

  const auto j = nlohmann::json::parse(testing::ReadFileOrEmpty(out + "/analysis.json"));
  const int n = 170;  // tokens of s001.txt
  EXPECT_EQ(j["model"], testing::ModelPath());
  EXPECT_EQ(j["input"], S001());
  EXPECT_EQ(j["input_tokens"], n);
  EXPECT_EQ(j["tokens"], n);
  EXPECT_EQ(j["n_layer"], 5);
  EXPECT_EQ(j["n_head"], 8);
  EXPECT_EQ(j["n_head_kv"], 4);
  EXPECT_EQ(j["sparsity_threshold"], 0.01);
  EXPECT_TRUE(j["power_law_fit"].is_string());
  EXPECT_EQ(j["heavy_hitters"]["k"], 17);  // floor(10% of 170)
  EXPECT_EQ(j["heavy_hitters"]["recent"], 17);
  EXPECT_EQ(j["heavy_hitters"]["kv"], "h2o:heavy=17,recent=17");
  EXPECT_NEAR(j["heavy_hitters"]["chance_overlap"].get<double>(), 17.0 / n, 1e-12);
  ASSERT_EQ(j["layers"].size(), 5u);
  for (int l = 0; l < 5; ++l) {
    const auto& layer = j["layers"][l];
    SCOPED_TRACE(fmt::format("layer {}", l));
    EXPECT_EQ(layer["layer"], l);
    const double sparsity = layer["sparsity"];
    EXPECT_GE(sparsity, 0.0);
    EXPECT_LE(sparsity, 1.0);
    ASSERT_EQ(layer["head_sparsity"].size(), 8u);
    for (double s : layer["head_sparsity"]) {
      EXPECT_GE(s, 0.0);
      EXPECT_LE(s, 1.0);
    }
    const auto& fit = layer["power_law"];
    ASSERT_TRUE(fit["alpha"].is_number()) << fit.dump();
    EXPECT_TRUE(std::isfinite(fit["alpha"].get<double>()));
    EXPECT_GE(fit["r_squared"].get<double>(), 0.0);
    EXPECT_LE(fit["r_squared"].get<double>(), 1.0);
    EXPECT_EQ(fit["n_points"], (n + 1) / 2);  // the head: --fit-ranks 0.5 by default
    EXPECT_EQ(layer["head_power_law"].size(), 8u);
    // Every query row sums to 1, so a head's accumulated attention sums
    // to the number of rows, and so does the mean rank curve.
    const auto& ranks = layer["rank_scores"];
    ASSERT_EQ(ranks.size(), static_cast<size_t>(n));
    double total = 0.0;
    for (size_t r = 0; r < ranks.size(); ++r) {
      total += ranks[r].get<double>();
      if (r > 0) {
        EXPECT_LE(ranks[r].get<double>(), ranks[r - 1].get<double>());
      }
    }
    EXPECT_NEAR(total, n, 1e-3);
    // The line meets the data where the heavy hitters are: at rank 1 within
    // a factor 1.5 (a fit swayed by the tail misses it several-fold).
    const double at_rank_1 = std::exp(fit["log_c"].get<double>());
    EXPECT_GT(at_rank_1, ranks[0].get<double>() / 1.5);
    EXPECT_LT(at_rank_1, ranks[0].get<double>() * 1.5);
    const double overlap = layer["heavy_overlap"];
    EXPECT_GE(overlap, 0.0);
    EXPECT_LE(overlap, 1.0);
    EXPECT_EQ(layer["kv_head_overlap"].size(), 4u);
  }
  EXPECT_TRUE(j["mean"]["sparsity"].is_number());
  EXPECT_TRUE(j["mean"]["r_squared"].is_number());
  EXPECT_TRUE(j["mean"]["alpha"].is_number());
  EXPECT_TRUE(j["mean"]["heavy_overlap"].is_number());

  ExpectSvg(out + "/sparsity.svg", 1);
  ExpectSvg(out + "/power_law.svg", 10);     // one line per layer, and its fit
  EXPECT_EQ(Count(testing::ReadFileOrEmpty(out + "/power_law.svg"), "stroke-dasharray"), 10u);
  ExpectSvg(out + "/heavy_overlap.svg", 2);  // overlap and chance
  std::filesystem::remove_all(out);
}

// Each head's sparsity and each layer's mean rank curve, recomputed from a
// double-precision forward pass of the same 40 tokens (f32 K/V on both
// sides). An entry within 1% of its row's threshold may count either way
// in float; the sparsity may differ by those entries only.
TEST(AnalyzeCli, StatisticsMatchAnIndependentRecomputation) {
  const int n = 40, n_layer = 5, n_head = 8;
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const std::vector<int32_t> ids = testing::ReadStreamPrefix("s001.txt", n);
  // [layer][head]: sparse entries for sure, within the band, and the
  // accumulated attention per key position.
  std::vector<std::vector<double>> sure(n_layer, std::vector<double>(n_head)), band = sure;
  std::vector<std::vector<std::vector<double>>> acc(
      n_layer, std::vector<std::vector<double>>(n_head, std::vector<double>(n, 0.0)));
  testing::ReferenceForward ref(**model);
  ref.on_attention = [&](int32_t l, int32_t h, int32_t, const std::vector<double>& p) {
    const double threshold = 0.01 * *std::max_element(p.begin(), p.end());
    double below = 0, near = 0;
    for (size_t s = 0; s < p.size(); ++s) {
      acc[l][h][s] += p[s];
      if (std::fabs(p[s] - threshold) <= 0.01 * threshold) {
        ++near;
      } else if (p[s] < threshold) {
        ++below;
      }
    }
    sure[l][h] += below / p.size() / n;  // mean over the n query rows
    band[l][h] += near / p.size() / n;
  };
  ref.Eval(ids);

  const std::string out = OutDir("recompute");
  const std::string ids_file = out + ".ids";
  std::ofstream(ids_file) << testing::JoinIds(ids) << "\n";
  const auto r = RunH2o(Analyze(fmt::format("--token-file {} --out {} --kv-type f32 --json", ids_file, out)));
  std::filesystem::remove_all(out);
  std::filesystem::remove(ids_file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["layers"].size(), static_cast<size_t>(n_layer));
  for (int l = 0; l < n_layer; ++l) {
    const auto& layer = j["layers"][l];
    std::vector<double> rank(n, 0.0);
    for (int h = 0; h < n_head; ++h) {
      const double got = layer["head_sparsity"][h];
      EXPECT_GE(got, sure[l][h] - 1e-9) << "layer " << l << " head " << h;
      EXPECT_LE(got, sure[l][h] + band[l][h] + 1e-9) << "layer " << l << " head " << h;
      std::vector<double> sorted = acc[l][h];
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      for (int i = 0; i < n; ++i) rank[i] += sorted[i] / n_head;
    }
    ASSERT_EQ(layer["rank_scores"].size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(layer["rank_scores"][i].get<double>(), rank[i], 1e-4 * (1.0 + rank[i]))
          << "layer " << l << " rank " << i;
    }
  }
}

TEST(AnalyzeCli, JsonFlagPrintsTheReport) {
  const std::string out = OutDir("json");
  const auto r = RunH2o(Analyze(
      fmt::format("--token-file {} --out {} --json -c 40 --heavy 10 --recent 5", S001(), out)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto printed = nlohmann::json::parse(r.out);
  EXPECT_EQ(printed, nlohmann::json::parse(testing::ReadFileOrEmpty(out + "/analysis.json")));
  EXPECT_EQ(printed["tokens"], 40);  // cut to -c
  EXPECT_EQ(printed["input_tokens"], 170);
  EXPECT_EQ(printed["heavy_hitters"]["kv"], "h2o:heavy=10,recent=5");
  std::filesystem::remove_all(out);
}

TEST(AnalyzeCli, TextInput) {
  const std::string out = OutDir("text");
  const std::string text_path = out + ".txt";
  std::ofstream(text_path) << "Once upon a time, there was a little girl named Lily. She loved to "
                              "play outside in the sun with her dog.";
  const auto r = RunH2o(Analyze(fmt::format("-f {} --out {} --json", text_path, out)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["tokens"].get<int>(), 10);
  EXPECT_EQ(j["tokens"], j["layers"][0]["rank_scores"].size());
  std::filesystem::remove_all(out);
  std::filesystem::remove(text_path);
}

TEST(AnalyzeCli, ErrorsAreOneLine) {
  const std::string out = OutDir("errors");
  ExpectOneErrorLine(
      RunH2o(Analyze(fmt::format("--token-file {} --out /nonexistent/dir/out", S001()))),
      "/nonexistent/dir/out");
  ExpectOneErrorLine(
      RunH2o(fmt::format("analyze -m /nonexistent.gguf --token-file {} --out {}", S001(), out)),
      "/nonexistent.gguf");
  ExpectOneErrorLine(
      RunH2o(Analyze(fmt::format("--token-file {} --out {} --heavy x", S001(), out))), "--heavy");
  ExpectOneErrorLine(
      RunH2o(Analyze(fmt::format("--token-file {} --out {} --heavy 0 --recent 4", S001(), out))),
      "heavy >= 1");
  ExpectOneErrorLine(RunH2o(Analyze(fmt::format("--token-file /nonexistent.txt --out {}", out))),
                     "/nonexistent.txt");
  const std::string bad_ids = out + ".ids";
  std::ofstream(bad_ids) << "1 2 3\n4 five 6\n";
  ExpectOneErrorLine(RunH2o(Analyze(fmt::format("--token-file {} --out {}", bad_ids, out))),
                     bad_ids + ":2");
  std::ofstream(bad_ids) << "1 2 9999\n";
  ExpectOneErrorLine(
      RunH2o(Analyze(fmt::format("--token-file {} --out {} --heavy 1", bad_ids, out))), "9999");
  // 10% of 3 tokens is no heavy hitter at all.
  std::ofstream(bad_ids) << "1 2 3\n";
  ExpectOneErrorLine(RunH2o(Analyze(fmt::format("--token-file {} --out {}", bad_ids, out))),
                     "at least 1 token");
  ExpectOneErrorLine(RunH2o(Analyze(fmt::format("--out {}", out))), "-f TEXT or --token-file");
  // No report, and no directory, is left behind by a failed run.
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(bad_ids);
}

}  // namespace
}  // namespace h2o
