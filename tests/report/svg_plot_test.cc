// RenderLinePlotSvg: well-formed XML (checked by the small independent
// parser of eval/xml_check.h), one group per series, escaping, and the skipping rules.
#include "report/svg_plot.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "xml_check.h"

namespace h2o {
namespace {

using testing::Count;
using testing::XmlProblem;

// The text of the k-th series group.
std::string SeriesGroup(const std::string& svg, size_t k) {
  size_t at = svg.find("class=\"series\"");
  for (size_t j = 0; j < k && at != std::string::npos; ++j) {
    at = svg.find("class=\"series\"", at + 1);
  }
  if (at == std::string::npos) return "";
  return svg.substr(at, svg.find("</g>", at) - at);
}

// The d attribute of the group's <path>, "" when it has none.
std::string PathData(const std::string& group) {
  const size_t at = group.find(" d=\"");
  if (at == std::string::npos) return "";
  return group.substr(at + 4, group.find('"', at + 4) - at - 4);
}

// Values of attribute `attr` on every <circle> in `text`, in order.
std::vector<double> CircleAttr(const std::string& text, const std::string& attr) {
  std::vector<double> values;
  const std::string key = " " + attr + "=\"";
  for (size_t at = text.find("<circle"); at != std::string::npos;
       at = text.find("<circle", at + 1)) {
    const size_t v = text.find(key, at);
    values.push_back(std::stod(text.substr(v + key.size())));
  }
  return values;
}

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(XmlChecker, RejectsBrokenDocuments) {
  // The checker itself must be able to fail.
  EXPECT_EQ(XmlProblem("<svg><g a=\"1\"/></svg>"), "");
  EXPECT_NE(XmlProblem("<svg><g></svg></g>"), "");
  EXPECT_NE(XmlProblem("<svg><g></svg>"), "");
  EXPECT_NE(XmlProblem("<svg a=1></svg>"), "");
  EXPECT_NE(XmlProblem("<svg a=\"1\" a=\"2\"></svg>"), "");
  EXPECT_NE(XmlProblem("<svg>a & b</svg>"), "");
  EXPECT_NE(XmlProblem("<svg a=\"x<y\"></svg>"), "");
  EXPECT_NE(XmlProblem("<svg></svg><svg></svg>"), "");
}

TEST(SvgPlot, WellFormedWithOneGroupPerSeries) {
  LinePlot plot;
  plot.title = "ROUGE-1 vs KV budget";
  plot.x_label = "budget (%)";
  plot.y_label = "ROUGE-1";
  plot.series = {{"full", {4, 10, 20, 60}, {0.3, 0.3, 0.3, 0.3}},
                 {"h2o", {4, 10, 20, 60}, {0.1, 0.2, 0.28, 0.3}},
                 {"local", {4, 10, 20, 60}, {0.01, 0.05, 0.1, 0.25}}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""),
            std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"series\""), 3u);
  EXPECT_EQ(Count(svg, "class=\"legend-entry\""), 3u);
  EXPECT_EQ(Count(svg, "<path"), 3u);
  EXPECT_NE(svg.find(">ROUGE-1 vs KV budget</text>"), std::string::npos);
  EXPECT_EQ(CircleAttr(SeriesGroup(svg, 1), "cx").size(), 4u);
}

TEST(SvgPlot, PointsMapIntoThePictureInOrder) {
  LinePlot plot;
  plot.series = {{"s", {1, 2, 3}, {1, 2, 3}}};
  const std::string group = SeriesGroup(RenderLinePlotSvg(plot), 0);
  const std::vector<double> cx = CircleAttr(group, "cx"), cy = CircleAttr(group, "cy");
  ASSERT_EQ(cx.size(), 3u);
  EXPECT_LT(cx[0], cx[1]);
  EXPECT_LT(cx[1], cx[2]);
  EXPECT_GT(cy[0], cy[1]);  // SVG y grows downwards
  EXPECT_GT(cy[1], cy[2]);
  EXPECT_NEAR(cx[1] - cx[0], cx[2] - cx[1], 0.02);  // linear axis: even spacing
}

TEST(SvgPlot, EscapesText) {
  LinePlot plot;
  plot.title = "\"quoted\" & 'single'";
  plot.x_label = "x < y";
  plot.y_label = "p > q";
  plot.series = {{"a<b & c>d", {1, 2}, {1, 2}}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("a&lt;b &amp; c&gt;d"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_NE(svg.find("&quot;quoted&quot; &amp; &apos;single&apos;"), std::string::npos);
  EXPECT_NE(svg.find("x &lt; y"), std::string::npos);
}

TEST(SvgPlot, LogAxesSkipNonPositiveValuesAndSpaceDecadesEvenly) {
  LinePlot plot;
  plot.log_x = true;
  plot.log_y = true;
  // y <= 0 at x = 1 and 10, x <= 0 at the last point: two points remain.
  plot.series = {{"rank", {1, 10, 100, 1000, 0}, {0, -1, 10, 1000, 5}},
                 {"decades", {1, 10, 100}, {5, 5, 5}}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(Count(svg, "class=\"series\""), 2u);
  const std::string rank = SeriesGroup(svg, 0);
  EXPECT_EQ(CircleAttr(rank, "cx").size(), 2u);
  EXPECT_EQ(Count(PathData(rank), "M"), 1u);
  EXPECT_EQ(Count(PathData(rank), "L"), 1u);
  const std::vector<double> cx = CircleAttr(SeriesGroup(svg, 1), "cx");
  ASSERT_EQ(cx.size(), 3u);
  EXPECT_NEAR(cx[1] - cx[0], cx[2] - cx[1], 0.02);  // 1, 10, 100: one decade apart each
  EXPECT_NE(svg.find(">100</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1000</text>"), std::string::npos);
}

TEST(SvgPlot, NonFinitePointsAreSkippedAndBreakTheLine) {
  LinePlot plot;
  plot.series = {{"s", {1, 2, 3, 4, 5, kNan}, {1, kNan, 3, kInf, 5, 6}}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  const std::string group = SeriesGroup(svg, 0);
  EXPECT_EQ(CircleAttr(group, "cx").size(), 3u);  // x = 1, 3, 5
  EXPECT_EQ(Count(PathData(group), "M"), 3u);     // each one starts a new piece
  EXPECT_EQ(Count(PathData(group), "L"), 0u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgPlot, DegenerateDataStillGivesFiniteCoordinates) {
  const std::vector<PlotSeries> cases = {
      {"single point", {3}, {7}},
      {"constant", {1, 2, 3}, {0.5, 0.5, 0.5}},
      {"all zero", {0, 0}, {0, 0}},
      {"nothing plottable", {kNan}, {1}},
      {"empty", {}, {}},
      {"mismatched sizes", {1, 2, 3}, {4}},
      {"near the double limits", {-1e308, -1e300, 1e300}, {1.0, 1e-308, 1e300}},
  };
  for (const bool log : {false, true}) {
    for (const PlotSeries& s : cases) {
      LinePlot plot;
      plot.log_x = plot.log_y = log;
      plot.series = {s};
      const std::string svg = RenderLinePlotSvg(plot);
      SCOPED_TRACE(s.name + (log ? " (log)" : ""));
      EXPECT_EQ(XmlProblem(svg), "") << svg;
      EXPECT_EQ(Count(svg, "class=\"series\""), 1u);
      EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
      EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
      const std::string group = SeriesGroup(svg, 0);
      // Inside the 760 x 460 picture.
      for (const auto& [attr, limit] :
           {std::pair<std::string, double>{"cx", 760}, std::pair<std::string, double>{"cy", 460}}) {
        for (const double v : CircleAttr(group, attr)) {
          EXPECT_TRUE(std::isfinite(v)) << attr;
          EXPECT_GE(v, 0) << attr;
          EXPECT_LE(v, limit) << attr;
        }
      }
    }
  }
}

TEST(SvgPlot, NoSeriesIsAnEmptyButValidChart) {
  LinePlot plot;
  plot.title = "nothing yet";
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(Count(svg, "class=\"series\""), 0u);
}

TEST(SvgPlot, ManyPointsDrawALineWithoutMarkers) {
  PlotSeries s{"dense", {}, {}};
  for (int i = 1; i <= 1000; ++i) {
    s.x.push_back(i);
    s.y.push_back(1.0 / i);
  }
  LinePlot plot;
  plot.series = {s};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "");
  const std::string group = SeriesGroup(svg, 0);
  EXPECT_EQ(Count(group, "<circle"), 0u);
  EXPECT_EQ(Count(PathData(group), "L"), 999u);
}

// The y pixel of each tick label of the y axis (text-anchor="end"), by label.
std::vector<std::pair<std::string, double>> YTicks(const std::string& svg) {
  std::vector<std::pair<std::string, double>> ticks;
  const std::string key = "text-anchor=\"end\">";
  for (size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const size_t y = svg.rfind(" y=\"", at);
    const size_t end = svg.find('<', at);
    ticks.emplace_back(svg.substr(at + key.size(), end - at - key.size()),
                       std::stod(svg.substr(y + 4)));
  }
  return ticks;
}

// Each error bar's vertical extent in pixels (from its "M x top L x bottom").
std::vector<double> ErrorBarLengths(const std::string& svg) {
  std::vector<double> lengths;
  const std::string key = "class=\"error-bar\" d=\"M";
  for (size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    double x1 = 0, top = 0, x2 = 0, bottom = 0;
    EXPECT_EQ(std::sscanf(svg.c_str() + at + key.size(), "%lf %lf L%lf %lf", &x1, &top, &x2,
                          &bottom),
              4);
    EXPECT_EQ(x1, x2);  // vertical
    lengths.push_back(bottom - top);
  }
  return lengths;
}

TEST(SvgPlot, ErrorBarsOnePerPointWithAStandardError) {
  LinePlot plot;
  // Bars at x = 1 (0.5) and x = 3 (1.0); none where the error is NaN, 0 or missing.
  plot.series = {{"acc", {1, 2, 3, 4, 5}, {5, 6, 7, 8, 9}, {0.5, kNan, 1.0, 0}},
                 {"no errors", {1, 2}, {4, 4}}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(Count(svg, "class=\"error-bar\""), 2u);
  EXPECT_EQ(Count(SeriesGroup(svg, 1), "error-bar"), 0u);
  const std::vector<double> lengths = ErrorBarLengths(svg);
  ASSERT_EQ(lengths.size(), 2u);
  EXPECT_GT(lengths[0], 5);
  EXPECT_NEAR(lengths[1], 2 * lengths[0], 0.05);  // linear axis: twice the error, twice the bar
  // The bars fit in the picture: the axis reaches y + err = 8 at x = 3.
  double top = 1e9;
  for (const auto& [label, y] : YTicks(svg)) top = std::min(top, y);
  EXPECT_GE(CircleAttr(SeriesGroup(svg, 0), "cy")[2] - lengths[1] / 2, top - 4 - 0.01);
}

TEST(SvgPlot, ErrorBarsOnALogAxisStopAtTheAxisBelowZero) {
  LinePlot plot;
  plot.log_y = true;
  plot.series = {{"ppl", {1, 2}, {10, 20}, {20, 5}}};  // 10 - 20 < 0: the bar ends at the axis
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  ASSERT_EQ(ErrorBarLengths(svg).size(), 2u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(SvgPlot, LinearYAxisStartsAtZeroWhenThatCostsUnderHalfTheHeight) {
  LinePlot plot;
  plot.series = {{"s", {1, 2}, {0.3, 0.8}}};  // 0.3 <= 0.8 / 2: from 0
  std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(YTicks(svg).front().first, "0");
  EXPECT_EQ(Count(svg, "class=\"axis-break\""), 0u);
  EXPECT_EQ(Count(svg, "class=\"axis-note\""), 0u);

  plot.series = {{"s", {1, 2}, {3.4, 3.9}}};  // from 0 the data would fill an eighth
  svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(YTicks(svg).front().first, "0");
  EXPECT_EQ(Count(svg, "class=\"axis-break\""), 1u);
  EXPECT_NE(svg.find("y axis starts at " + YTicks(svg).front().first + ", not 0</text>"),
            std::string::npos)
      << svg;
  const std::vector<double> cy = CircleAttr(SeriesGroup(svg, 0), "cy");
  EXPECT_GT(cy[0] - cy[1], 100);  // zoomed: the difference fills the height

  plot.series = {{"s", {1, 2}, {-3.9, -3.4}}};  // all negative: the break is at the top
  svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(Count(svg, "class=\"axis-break\""), 1u);
  EXPECT_NE(svg.find("y axis ends at"), std::string::npos) << svg;
}

TEST(SvgPlot, LogYAxisIsMarkedAsHavingNoZero) {
  LinePlot plot;
  plot.log_y = true;
  plot.series = {{"s", {1, 2}, {1, 1000}}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(Count(svg, "class=\"axis-break\""), 1u);
  EXPECT_NE(svg.find("log scale"), std::string::npos);
}

TEST(SvgPlot, LogAxisUnderThreeDecadesHasTicksInsideTheDecades) {
  LinePlot plot;
  plot.log_y = true;
  plot.series = {{"s", {1, 2, 3}, {3.4, 3.9, 28.2}}};
  const std::string svg = RenderLinePlotSvg(plot);
  std::vector<std::string> labels;
  for (const auto& [label, y] : YTicks(svg)) labels.push_back(label);
  EXPECT_EQ(labels, (std::vector<std::string>{"3", "4", "5", "6", "7", "8", "9", "10", "20", "30"}));
  // Ends on the ticks enclosing the data, not on whole decades (1 .. 100).
  const std::vector<double> cy = CircleAttr(SeriesGroup(svg, 0), "cy");
  EXPECT_GT(cy[0] - cy[1], 15);  // 3.4 vs 3.9: apart, not squashed
}

TEST(SvgPlot, LongLegendNamesWidenThePicture) {
  LinePlot plot;
  plot.series = {{"full", {1, 2}, {1, 2}}};
  EXPECT_NE(RenderLinePlotSvg(plot).find(" width=\"760\" height=\"460\""), std::string::npos);
  const std::string name = "layer 12 fit: 29.4 * rank^-0.87 (R^2 0.95)";  // 42 characters
  plot.series.push_back({name, {1, 2}, {2, 1}});
  const std::string svg = RenderLinePlotSvg(plot);
  const size_t at = svg.find("<svg ");
  const double width = std::stod(svg.substr(svg.find(" width=\"", at) + 8));
  EXPECT_GE(width, 560 + 52 + 6 * 42.0);  // the legend's text starts 52 px right of the plot
  EXPECT_NE(svg.find("viewBox=\"0 0 " + fmt::format("{}", width) + " 460\""), std::string::npos);
}

TEST(SvgPlot, DashedSeriesHasNoMarkersAndMayShareAColour) {
  LinePlot plot;
  plot.series = {{"data", {1, 2, 3}, {1, 2, 3}},
                 {"other", {1, 2, 3}, {3, 2, 1}},
                 {"data fit", {1, 3}, {1, 3}, {}, /*dashed=*/true, /*color=*/0}};
  const std::string svg = RenderLinePlotSvg(plot);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  const std::string fit = SeriesGroup(svg, 2);
  EXPECT_EQ(Count(fit, "<circle"), 0u);
  EXPECT_EQ(Count(fit, "stroke-dasharray"), 1u);
  EXPECT_EQ(Count(SeriesGroup(svg, 0), "stroke-dasharray"), 0u);
  const auto fill = [](const std::string& group) {
    const size_t at = group.find("fill=\"");
    return group.substr(at, group.find('"', at + 6) - at);
  };
  EXPECT_EQ(fill(fit), fill(SeriesGroup(svg, 0)));
  EXPECT_NE(fill(fit), fill(SeriesGroup(svg, 1)));
  // Its legend entry is a dashed line without a marker.
  const size_t legend = svg.find("class=\"legend\"");
  EXPECT_EQ(Count(svg.substr(legend), "stroke-dasharray"), 1u);
  EXPECT_EQ(Count(svg.substr(legend), "<circle"), 2u);
}

}  // namespace
}  // namespace h2o
