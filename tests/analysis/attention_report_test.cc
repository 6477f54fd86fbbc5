// The SVG plots of `h2o analyze` on a hand-built analysis: the power-law
// plot draws each layer's fitted line next to its data.
#include "analysis/attention_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/attention_stats.h"
#include "xml_check.h"

namespace h2o {
namespace {

// A layer whose rank scores are exactly c * rank^-alpha over n ranks.
LayerAnalysis PowerLawLayer(double c, double alpha, int n) {
  LayerAnalysis layer;
  for (int r = 1; r <= n; ++r) layer.rank_scores.push_back(c * std::pow(r, -alpha));
  layer.fit = FitPowerLaw(layer.rank_scores);
  return layer;
}

// The text of the series group titled `name`, "" when there is none.
std::string Group(const std::string& svg, const std::string& name) {
  const size_t at = svg.find("<title>" + name + "</title>");
  if (at == std::string::npos) return "";
  return svg.substr(at, svg.find("</g>", at) - at);
}

// The first "M x y" and the last "L x y" of a group's path.
std::pair<std::pair<double, double>, std::pair<double, double>> PathEnds(const std::string& g) {
  std::pair<double, double> first{-1, -1}, last{-1, -1};
  const size_t d = g.find(" d=\"M");
  if (d == std::string::npos) return {first, last};
  std::sscanf(g.c_str() + d + 5, "%lf %lf", &first.first, &first.second);
  const size_t l = g.rfind('L', g.find('"', d + 5));
  std::sscanf(g.c_str() + l + 1, "%lf %lf", &last.first, &last.second);
  return {first, last};
}

std::vector<double> Circles(const std::string& g, const char* attr) {
  std::vector<double> v;
  const std::string key = std::string(" ") + attr + "=\"";
  for (size_t at = g.find(key); at != std::string::npos; at = g.find(key, at + 1)) {
    v.push_back(std::stod(g.substr(at + key.size())));
  }
  return v;
}

TEST(AttentionReport, PowerLawPlotDrawsEachLayersFitAsADashedLine) {
  AttentionAnalysis a;
  a.n_tokens = 50;
  a.layers = {PowerLawLayer(0.5, 1.2, 50), PowerLawLayer(2.0, 0.7, 50)};
  a.layers.push_back(LayerAnalysis{});  // no scores: a fit of no points, so no fit line
  a.layers.back().fit = FitPowerLaw(a.layers.back().rank_scores);
  const std::string svg = PowerLawSvg(a);
  EXPECT_EQ(testing::XmlProblem(svg), "") << svg;
  EXPECT_EQ(testing::Count(svg, "class=\"series\""), 5u);  // 3 layers, 2 fits

  const std::string fit0 = Group(svg, "layer 0 fit: 0.5 * rank^-1.20 (R^2 1.00)");
  const std::string fit1 = Group(svg, "layer 1 fit: 2 * rank^-0.70 (R^2 1.00)");
  ASSERT_FALSE(fit0.empty()) << svg;
  ASSERT_FALSE(fit1.empty()) << svg;
  EXPECT_EQ(Group(svg, "layer 2 fit").find("fit"), std::string::npos);
  EXPECT_EQ(testing::Count(fit0, "stroke-dasharray"), 1u);
  EXPECT_EQ(testing::Count(fit0, "<circle"), 0u);

  // The data lie exactly on their power law, so the fit line runs from the
  // first data point (rank 1) to the last (rank 50), in the data's colour.
  const std::string data0 = Group(svg, "layer 0");
  const std::vector<double> cx = Circles(data0, "cx"), cy = Circles(data0, "cy");
  ASSERT_EQ(cx.size(), 50u);
  const auto [first, last] = PathEnds(fit0);
  EXPECT_NEAR(first.first, cx.front(), 0.02);
  EXPECT_NEAR(first.second, cy.front(), 0.02);
  EXPECT_NEAR(last.first, cx.back(), 0.02);
  EXPECT_NEAR(last.second, cy.back(), 0.02);
  const auto color = [&svg](const std::string& name) {
    const size_t title = svg.find("<title>" + name + "</title>");
    const size_t fill = svg.rfind("fill=\"", title);
    return svg.substr(fill, 13);
  };
  EXPECT_EQ(color("layer 0"), color("layer 0 fit: 0.5 * rank^-1.20 (R^2 1.00)"));
  EXPECT_NE(color("layer 0"), color("layer 1"));
  // A log-log plot has no zero: the y axis says so.
  EXPECT_EQ(testing::Count(svg, "class=\"axis-break\""), 1u);
}

}  // namespace
}  // namespace h2o
