// Sweep report writers on a small hand-built report: the exact markdown,
// CSV and JSON a reader gets, and the files written under a prefix.
#include "report/sweep_report.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "xml_check.h"

namespace h2o {
namespace {

const double kNaN = std::nan("");

SweepReport TwoPolicyReport() {
  SweepReport r;
  r.title = "toy sweep";
  r.metrics = {{"ppl", "perplexity", 2}, {"top1", "top-1 agreement", 3}};
  r.rows = {
      {"full", "", "full", {12.5, 1.0}},
      {"local", "10%", "local:recent=10%", {20.0, 0.5}},
      {"local", "20%", "local:recent=20%", {15.25, 0.75}},
      {"h2o", "10%", "h2o:heavy=5%,recent=5%", {14.0, kNaN}},
  };
  r.meta = {{"model", "toy.gguf"}};
  return r;
}

TEST(SweepReport, BudgetsInFirstUseOrder) {
  EXPECT_EQ(TwoPolicyReport().Budgets(), (std::vector<std::string>{"10%", "20%"}));
}

TEST(SweepReport, MarkdownIsOneFigureFourTablePerMetric) {
  const std::string want =
      "## toy sweep\n"
      "\n### ppl: perplexity\n\n"
      "| policy | 10% | 20% |\n"
      "|---|---:|---:|\n"
      "| full | 12.50 | 12.50 |\n"
      "| local | 20.00 | 15.25 |\n"
      "| h2o | 14.00 | - |\n"
      "\n### top1: top-1 agreement\n\n"
      "| policy | 10% | 20% |\n"
      "|---|---:|---:|\n"
      "| full | 1.000 | 1.000 |\n"
      "| local | 0.500 | 0.750 |\n"
      "| h2o | - | - |\n";
  EXPECT_EQ(SweepMarkdown(TwoPolicyReport()), want);
}

TEST(SweepReport, MarkdownWithoutBudgetsListsSpecs) {
  SweepReport r;
  r.title = "two specs";
  r.metrics = {{"ppl", "perplexity", 1}};
  r.rows = {{"full", "", "full", {3.0}}, {"h2o", "", "h2o:heavy=4,recent=4", {3.25}}};
  EXPECT_EQ(SweepMarkdown(r),
            "## two specs\n"
            "\n| kv | ppl |\n"
            "|---|---:|\n"
            "| full | 3.0 |\n"
            "| h2o:heavy=4,recent=4 | 3.2 |\n");
}

TEST(SweepReport, CsvQuotesSpecsAndLeavesMissingEmpty) {
  EXPECT_EQ(SweepCsv(TwoPolicyReport()),
            "policy,budget,kv,ppl,top1\n"
            "full,,full,12.5,1\n"
            "local,10%,local:recent=10%,20,0.5\n"
            "local,20%,local:recent=20%,15.25,0.75\n"
            "h2o,10%,\"h2o:heavy=5%,recent=5%\",14,\n");
}

TEST(SweepReport, JsonHasRowsWithNamedValues) {
  const nlohmann::json j = SweepJson(TwoPolicyReport());
  EXPECT_EQ(j["title"], "toy sweep");
  ASSERT_EQ(j["metrics"].size(), 2u);
  EXPECT_EQ(j["metrics"][1]["name"], "top1");
  EXPECT_EQ(j["metrics"][1]["label"], "top-1 agreement");
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_TRUE(j["rows"][0]["budget"].is_null());
  EXPECT_EQ(j["rows"][2]["budget"], "20%");
  EXPECT_EQ(j["rows"][2]["kv"], "local:recent=20%");
  EXPECT_EQ(j["rows"][2]["values"]["ppl"], 15.25);
  EXPECT_TRUE(j["rows"][3]["values"]["top1"].is_null());
  EXPECT_EQ(j["meta"]["model"], "toy.gguf");
}

TEST(SweepReport, PlotHasALinePerPolicyAndFullAcrossTheBudgets) {
  const LinePlot plot = SweepPlot(TwoPolicyReport(), 0);
  EXPECT_EQ(plot.title, "toy sweep: ppl");
  EXPECT_EQ(plot.y_label, "perplexity");
  EXPECT_EQ(plot.x_label, "KV cache budget (% of each sequence's tokens)");
  EXPECT_FALSE(plot.log_y);  // 12.5 .. 20: within a factor of 4
  ASSERT_EQ(plot.series.size(), 3u);
  EXPECT_EQ(plot.series[0].name, "full");
  EXPECT_EQ(plot.series[0].x, (std::vector<double>{10, 20}));
  EXPECT_EQ(plot.series[0].y, (std::vector<double>{12.5, 12.5}));
  EXPECT_EQ(plot.series[1].name, "local");
  EXPECT_EQ(plot.series[1].x, (std::vector<double>{10, 20}));
  EXPECT_EQ(plot.series[1].y, (std::vector<double>{20.0, 15.25}));
  EXPECT_EQ(plot.series[2].name, "h2o");
  EXPECT_EQ(plot.series[2].x, (std::vector<double>{10}));
  EXPECT_EQ(plot.series[2].y, (std::vector<double>{14.0}));
  // Budgets given out of order are plotted in order; token counts label the axis.
  SweepReport r;
  r.title = "t";
  r.metrics = {{"acc", "accuracy", 3}};
  r.rows = {{"h2o", "64", "h2o:heavy=32,recent=32", {0.5}},
            {"h2o", "16", "h2o:heavy=8,recent=8", {0.25}}};
  const LinePlot counts = SweepPlot(r, 0);
  EXPECT_EQ(counts.x_label, "KV cache budget (tokens)");
  ASSERT_EQ(counts.series.size(), 1u);
  EXPECT_EQ(counts.series[0].x, (std::vector<double>{16, 64}));
  EXPECT_EQ(counts.series[0].y, (std::vector<double>{0.25, 0.5}));
}

TEST(SweepReport, PercentAxisSaysWhatThePercentageIsOf) {
  SweepReport r = TwoPolicyReport();
  r.budget_percent_of = "each stream's tokens";
  const LinePlot plot = SweepPlot(r, 0);
  EXPECT_EQ(plot.x_label, "KV cache budget (% of each stream's tokens)");
  EXPECT_NE(RenderLinePlotSvg(plot).find(">KV cache budget (% of each stream&apos;s tokens)<"),
            std::string::npos);
}

// The README's perplexity sweep of stories260K: h2only 8x the others.
SweepReport OutlierReport() {
  SweepReport r;
  r.title = "perplexity";
  r.metrics = {{"ppl", "perplexity", 4}};
  r.rows = {{"full", "", "full", {3.4002}}};
  const std::pair<const char*, std::array<double, 3>> policies[] = {
      {"local", {3.8249, 3.5683, 3.4131}},
      {"h2o", {3.8774, 3.5659, 3.4127}},
      {"sink", {3.8294, 3.5671, 3.4124}},
      {"h2only", {28.2319, 21.2298, 7.3003}}};
  for (const auto& [policy, ppl] : policies) {
    const char* budgets[] = {"10%", "20%", "50%"};
    for (size_t b = 0; b < 3; ++b) r.rows.push_back({policy, budgets[b], "", {ppl[b]}});
  }
  return r;
}

// The cy of every marker of the series group named `name`.
std::vector<double> MarkerYs(const std::string& svg, const std::string& name) {
  const size_t group = svg.find("<title>" + name + "</title>");
  std::vector<double> ys;
  if (group == std::string::npos) return ys;
  const size_t end = svg.find("</g>", group);
  for (size_t at = svg.find(" cy=\"", group); at < end; at = svg.find(" cy=\"", at + 1)) {
    ys.push_back(std::stod(svg.substr(at + 5)));
  }
  return ys;
}

TEST(SweepReport, AnOutlierPolicyPutsThePlotOnALogAxis) {
  const LinePlot plot = SweepPlot(OutlierReport(), 0);
  EXPECT_TRUE(plot.log_y);
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(testing::XmlProblem(svg), "") << svg;
  EXPECT_EQ(testing::Count(svg, "class=\"axis-break\""), 1u);
  EXPECT_NE(svg.find("log scale"), std::string::npos);
  // h2o's points (3.88, 3.57, 3.41) stay apart instead of sharing the
  // bottom few pixels of a 0..30 axis (about 5 px there).
  const std::vector<double> h2o = MarkerYs(svg, "h2o");
  ASSERT_EQ(h2o.size(), 3u);
  EXPECT_GT(h2o[2] - h2o[0], 15) << svg;  // SVG y grows downwards: 10% is higher
  // and h2o at 10% is clearly above full.
  const std::vector<double> full = MarkerYs(svg, "full");
  ASSERT_EQ(full.size(), 2u);
  EXPECT_GT(full[0] - h2o[0], 15);

  // Without h2only the values are within a factor of 4: a linear axis,
  // zoomed (3.4 .. 3.9 from 0 would fill an eighth) and marked as such.
  SweepReport close = OutlierReport();
  std::erase_if(close.rows, [](const SweepRow& row) { return row.policy == "h2only"; });
  const LinePlot linear = SweepPlot(close, 0);
  EXPECT_FALSE(linear.log_y);
  const std::string zoomed = RenderLinePlotSvg(linear);
  EXPECT_NE(zoomed.find(", not 0</text>"), std::string::npos);
  EXPECT_GT(MarkerYs(zoomed, "h2o")[2] - MarkerYs(zoomed, "h2o")[0], 100);
}

// Multiple choice as `h2o eval` reports it: acc with its standard error.
SweepReport AccuracyReport() {
  SweepReport r;
  r.title = "cloze";
  r.metrics = {{"acc", "accuracy", 4}, {"acc_stderr", "standard error of acc", 4}};
  r.rows = {{"full", "", "full", {0.7, 0.06}},
            {"h2o", "10%", "", {0.4, 0.065}},
            {"h2o", "20%", "", {0.6, kNaN}},
            {"local", "10%", "", {0.45, 0.066}},
            {"local", "20%", "", {0.5, 0.067}}};
  return r;
}

TEST(SweepReport, StandardErrorsAreErrorBarsNotAPlotOfTheirOwn) {
  const SweepReport r = AccuracyReport();
  EXPECT_EQ(StdErrMetric(r, 0), std::optional<size_t>(1));
  EXPECT_EQ(StdErrMetric(r, 1), std::nullopt);
  EXPECT_FALSE(IsStdErrMetric(r, 0));
  EXPECT_TRUE(IsStdErrMetric(r, 1));
  const LinePlot plot = SweepPlot(r, 0);
  EXPECT_NE(plot.y_label.find("standard error"), std::string::npos) << plot.y_label;
  ASSERT_EQ(plot.series.size(), 3u);
  EXPECT_EQ(plot.series[0].y_err, (std::vector<double>{0.06, 0.06}));  // full, at both ends
  EXPECT_EQ(plot.series[2].y_err, (std::vector<double>{0.066, 0.067}));
  // A bar per point with a standard error: full 2, h2o 1 (20% has none), local 2.
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(testing::XmlProblem(svg), "") << svg;
  EXPECT_EQ(testing::Count(svg, "class=\"error-bar\""), 5u);
  EXPECT_EQ(testing::Count(RenderLinePlotSvg(SweepPlot(r, 1)), "class=\"error-bar\""), 0u);
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// KV types swept: each metric against the KV memory, one series per
// policy label, its points in memory order, full a point like the others.
SweepReport TypesReport() {
  SweepReport r;
  r.title = "types";
  r.metrics = {{"ppl", "perplexity", 2}, {"kv_mib", "KV MiB", 3}};
  r.x_metric = 1;
  r.rows = {{"full f16", "", "full (f16)", {10.0, 8.0}},
            {"h2o f16", "", "h2o:heavy=5,recent=5 (f16)", {11.0, 2.0}},
            {"full q8_0", "", "full (q8_0)", {10.1, 4.25}},
            {"h2o q8_0", "", "h2o:heavy=5,recent=5 (q8_0)", {11.2, 1.0625}},
            {"h2o q8_0", "", "h2o:heavy=9,recent=9 (q8_0)", {10.6, 2.125}}};
  return r;
}

TEST(SweepReport, PlotAgainstAMetricHasASeriesPerLabelInItsOrder) {
  const LinePlot plot = SweepPlotAgainst(TypesReport(), 0, 1);
  EXPECT_EQ(plot.x_label, "KV MiB");
  EXPECT_EQ(plot.y_label, "perplexity");
  ASSERT_EQ(plot.series.size(), 4u);
  EXPECT_EQ(plot.series[3].name, "h2o q8_0");
  EXPECT_EQ(plot.series[3].x, (std::vector<double>{1.0625, 2.125}));
  EXPECT_EQ(plot.series[3].y, (std::vector<double>{11.2, 10.6}));
  EXPECT_EQ(plot.series[0].x, (std::vector<double>{8.0}));
}

TEST(SweepReport, AnXMetricAddsAPlotOfEachOtherMetricAgainstIt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("h2o_sweep_x_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> wrote;
  ASSERT_TRUE(WriteSweepFiles(TypesReport(), (dir / "t").string(),
                              [&wrote](const std::string& path) { wrote.push_back(path); })
                  .ok());
  const std::string t = (dir / "t").string();
  // No budgets: no plot against the budget; one of ppl against kv_mib.
  EXPECT_EQ(wrote, (std::vector<std::string>{t + ".md", t + ".csv", t + ".json",
                                             t + ".ppl-vs-kv_mib.svg"}));
  const std::string svg = Slurp(dir / "t.ppl-vs-kv_mib.svg");
  EXPECT_EQ(testing::XmlProblem(svg), "");
  EXPECT_EQ(testing::Count(svg, "class=\"series\""), 4u);
  std::filesystem::remove_all(dir);
}

TEST(SweepReport, WritesEveryFileUnderThePrefix) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("h2o_sweep_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const SweepReport r = TwoPolicyReport();
  ASSERT_TRUE(WriteSweepFiles(r, (dir / "out").string()).ok());
  EXPECT_EQ(Slurp(dir / "out.md"), SweepMarkdown(r));
  EXPECT_EQ(Slurp(dir / "out.csv"), SweepCsv(r));
  EXPECT_EQ(nlohmann::json::parse(Slurp(dir / "out.json")), SweepJson(r));
  for (const char* svg_name : {"out.svg", "out.top1.svg"}) {
    const std::string svg = Slurp(dir / svg_name);
    EXPECT_EQ(testing::XmlProblem(svg), "") << svg_name;
    EXPECT_EQ(testing::Count(svg, "class=\"series\""), 3u) << svg_name;  // full, local, h2o
  }
  EXPECT_NE(Slurp(dir / "out.svg").find("perplexity"), std::string::npos);
  size_t n_files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n_files;
  EXPECT_EQ(n_files, 5u);  // no temporaries left
  // A standard error has no plot of its own, and each file is reported once written.
  std::vector<std::string> wrote;
  ASSERT_TRUE(WriteSweepFiles(AccuracyReport(), (dir / "acc").string(),
                              [&wrote](const std::string& path) { wrote.push_back(path); })
                  .ok());
  const std::string acc = (dir / "acc").string();
  EXPECT_EQ(wrote,
            (std::vector<std::string>{acc + ".md", acc + ".csv", acc + ".json", acc + ".svg"}));
  for (const std::string& path : wrote) EXPECT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_FALSE(std::filesystem::exists(acc + ".acc_stderr.svg"));
  EXPECT_EQ(testing::Count(Slurp(acc + ".svg"), "class=\"error-bar\""), 5u);
  const Status bad = WriteSweepFiles(r, (dir / "missing" / "out").string());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("cannot write"), std::string::npos) << bad.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace h2o
