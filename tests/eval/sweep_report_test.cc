// Sweep report writers on a small hand-built report: the exact markdown,
// CSV and JSON a reader gets, and the files written under a prefix.
#include "eval/sweep_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eval/xml_check.h"

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
  EXPECT_EQ(plot.x_label, "KV cache budget (% of the sequence)");
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

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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
  const Status bad = WriteSweepFiles(r, (dir / "missing" / "out").string());
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("cannot write"), std::string::npos) << bad.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace h2o
