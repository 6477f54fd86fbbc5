// Coordinates: data values go through an axis transform (identity or
// log10) into "axis space", which maps linearly onto the plot rectangle.
// Axis ranges always have lo < hi in axis space, so the mapping never
// divides by zero.
#include "eval/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

namespace h2o {
namespace {

constexpr double kWidth = 760, kHeight = 460;
constexpr double kPlotLeft = 80, kPlotRight = kWidth - 200;  // legend to the right
constexpr double kPlotTop = 50, kPlotBottom = kHeight - 60;
constexpr size_t kMaxMarkedPoints = 100;
constexpr std::array<const char*, 10> kColors = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                 "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                                 "#bcbd22", "#17becf"};

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, newline and return.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') {
          out += c;
        }
    }
  }
  return out;
}

// Larger magnitudes are not plotted, so that spans and tick rounding
// cannot overflow.
constexpr double kMaxMagnitude = 1e300;

// The value in axis space, or nullopt when it cannot be plotted.
std::optional<double> ToAxisSpace(double v, bool log) {
  if (!std::isfinite(v) || std::abs(v) > kMaxMagnitude || (log && v <= 0)) return std::nullopt;
  return log ? std::log10(v) : v;
}

// One axis: its transform and its range and ticks in axis space.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> ticks;

  std::optional<double> ToAxis(double v) const { return ToAxisSpace(v, log); }
  double Fraction(double a) const { return (a - lo) / (hi - lo); }
  std::string TickLabel(double tick) const {
    return fmt::format("{:g}", log ? std::pow(10.0, tick) : tick);
  }
};

// A 1-2-5 step giving about five intervals over `span` (> 0).
double NiceStep(double span) {
  const double raw = span / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double mult = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
  return mult * magnitude;
}

// [lo, hi] in axis space, lo <= hi; nullopt when no point is plottable.
using Range = std::optional<std::pair<double, double>>;

// The axis over `range`, widened to round tick values.
Axis MakeAxis(bool log, Range range) {
  Axis axis;
  axis.log = log;
  double lo = range ? range->first : 0.0, hi = range ? range->second : 1.0;
  if (log) {
    // Whole decades, at least one; at most ~10 labelled ones.
    lo = std::floor(lo);
    hi = std::ceil(hi);
    if (lo == hi) {
      lo -= 1;
      hi += 1;
    }
    const double step = std::max(1.0, std::ceil((hi - lo) / 10));
    hi = lo + std::ceil((hi - lo) / step) * step;
    for (double t = lo; t <= hi; t += step) axis.ticks.push_back(t);
  } else {
    if (lo == hi) {
      const double half = lo != 0 ? std::abs(lo) * 0.1 : 1.0;
      lo -= half;
      hi += half;
    }
    const double step = NiceStep(hi - lo);
    lo = std::floor(lo / step) * step;
    hi = std::ceil(hi / step) * step;
    const int64_t n = std::llround((hi - lo) / step);  // about 5
    for (int64_t k = 0; k <= n; ++k) {
      const double t = lo + static_cast<double>(k) * step;
      axis.ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);  // no "-1.1e-17" labels
    }
  }
  if (!(std::isfinite(lo) && std::isfinite(hi) && hi > lo)) {
    // Rounding ate a tiny span next to a huge value (1e300 + 1e280): a
    // unit axis still draws a valid, if unhelpful, picture.
    lo = 0;
    hi = 1;
    axis.ticks = {0, 1};
  }
  axis.lo = lo;
  axis.hi = hi;
  return axis;
}

// The ranges of the plottable points on each axis.
std::pair<Range, Range> DataRanges(const LinePlot& plot) {
  Range xr, yr;
  const auto extend = [](Range& r, double v) {
    r = r ? std::pair(std::min(r->first, v), std::max(r->second, v)) : std::pair(v, v);
  };
  for (const PlotSeries& s : plot.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      const auto ax = ToAxisSpace(s.x[i], plot.log_x);
      const auto ay = ToAxisSpace(s.y[i], plot.log_y);
      if (!ax || !ay) continue;
      extend(xr, *ax);
      extend(yr, *ay);
    }
  }
  return {xr, yr};
}

std::string Num(double v) { return fmt::format("{:.2f}", v); }

void AppendAxes(std::string& svg, const Axis& x_axis, const Axis& y_axis) {
  // Grid and ticks first, so the axis lines are drawn over the grid.
  svg += "<g class=\"ticks\" font-size=\"11\">\n";
  for (const double t : x_axis.ticks) {
    const double px = kPlotLeft + x_axis.Fraction(t) * (kPlotRight - kPlotLeft);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<line x1=\"{0}\" y1=\"{2}\" x2=\"{0}\" y2=\"{3}\" stroke=\"#000\"/>"
        "<text x=\"{0}\" y=\"{4}\" text-anchor=\"middle\">{5}</text>\n",
        Num(px), Num(kPlotTop), Num(kPlotBottom), Num(kPlotBottom + 5), Num(kPlotBottom + 18),
        EscapeXml(x_axis.TickLabel(t)));
  }
  for (const double t : y_axis.ticks) {
    const double py = kPlotBottom - y_axis.Fraction(t) * (kPlotBottom - kPlotTop);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<line x1=\"{3}\" y1=\"{2}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000\"/>"
        "<text x=\"{4}\" y=\"{5}\" text-anchor=\"end\">{6}</text>\n",
        Num(kPlotLeft), Num(kPlotRight), Num(py), Num(kPlotLeft - 5), Num(kPlotLeft - 8),
        Num(py + 4), EscapeXml(y_axis.TickLabel(t)));
  }
  svg += "</g>\n<g class=\"axes\" stroke=\"#000\" stroke-width=\"1\">\n";
  svg += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>\n", Num(kPlotLeft),
                     Num(kPlotRight), Num(kPlotBottom));
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", Num(kPlotLeft),
                     Num(kPlotTop), Num(kPlotBottom));
  svg += "</g>\n";
}

void AppendSeries(std::string& svg, const PlotSeries& s, const char* color, const Axis& x_axis,
                  const Axis& y_axis) {
  std::string path, markers;
  bool pen_down = false;
  size_t plotted = 0;
  for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    const auto ax = x_axis.ToAxis(s.x[i]);
    const auto ay = y_axis.ToAxis(s.y[i]);
    if (!ax || !ay) {
      pen_down = false;  // a gap where the data has none
      continue;
    }
    const double px = kPlotLeft + x_axis.Fraction(*ax) * (kPlotRight - kPlotLeft);
    const double py = kPlotBottom - y_axis.Fraction(*ay) * (kPlotBottom - kPlotTop);
    path += fmt::format("{}{} {} ", pen_down ? "L" : "M", Num(px), Num(py));
    pen_down = true;
    markers += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\"/>", Num(px), Num(py));
    ++plotted;
  }
  if (!path.empty()) path.pop_back();
  svg += fmt::format("<g class=\"series\" fill=\"{0}\" stroke=\"{0}\">\n<title>{1}</title>\n",
                     color, EscapeXml(s.name));
  if (!path.empty()) {
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke-width=\"2\"/>\n", path);
  }
  if (plotted <= kMaxMarkedPoints && !markers.empty()) svg += markers + "\n";
  svg += "</g>\n";
}

void AppendLegend(std::string& svg, const LinePlot& plot) {
  svg += "<g class=\"legend\" font-size=\"12\">\n";
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const char* color = kColors[i % kColors.size()];
    const double y = kPlotTop + 10 + 20 * static_cast<double>(i);
    svg += fmt::format(
        "<g class=\"legend-entry\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
        "stroke=\"{3}\" stroke-width=\"2\"/><circle cx=\"{4}\" cy=\"{1}\" r=\"3\" "
        "fill=\"{3}\"/><text x=\"{5}\" y=\"{6}\">{7}</text></g>\n",
        Num(kPlotRight + 15), Num(y), Num(kPlotRight + 45), color, Num(kPlotRight + 30),
        Num(kPlotRight + 52), Num(y + 4), EscapeXml(plot.series[i].name));
  }
  svg += "</g>\n";
}

}  // namespace

std::string RenderLinePlotSvg(const LinePlot& plot) {
  const auto [x_range, y_range] = DataRanges(plot);
  const Axis x_axis = MakeAxis(plot.log_x, x_range);
  const Axis y_axis = MakeAxis(plot.log_y, y_range);

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  svg += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\">\n",
      kWidth, kHeight);
  svg += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", kWidth, kHeight);
  svg += fmt::format(
      "<text class=\"title\" x=\"{}\" y=\"28\" text-anchor=\"middle\" "
      "font-size=\"16\">{}</text>\n",
      Num((kPlotLeft + kPlotRight) / 2), EscapeXml(plot.title));
  AppendAxes(svg, x_axis, y_axis);
  svg += fmt::format(
      "<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
      "font-size=\"13\">{}</text>\n",
      Num((kPlotLeft + kPlotRight) / 2), Num(kHeight - 15), EscapeXml(plot.x_label));
  svg += fmt::format(
      "<text class=\"y-label\" x=\"20\" y=\"{0}\" text-anchor=\"middle\" "
      "font-size=\"13\" transform=\"rotate(-90 20 {0})\">{1}</text>\n",
      Num((kPlotTop + kPlotBottom) / 2), EscapeXml(plot.y_label));
  for (size_t i = 0; i < plot.series.size(); ++i) {
    AppendSeries(svg, plot.series[i], kColors[i % kColors.size()], x_axis, y_axis);
  }
  AppendLegend(svg, plot);
  svg += "</svg>\n";
  return svg;
}

}  // namespace h2o
