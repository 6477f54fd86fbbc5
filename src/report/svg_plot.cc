// Coordinates: data values go through an axis transform (identity or
// log10) into "axis space", which maps linearly onto the plot rectangle.
// Axis ranges always have lo < hi in axis space, so the mapping never
// divides by zero.
#include "report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace h2o {
namespace {

constexpr double kMinWidth = 760, kHeight = 460;
constexpr double kPlotLeft = 80, kPlotRight = kMinWidth - 200;  // legend to the right
constexpr double kPlotTop = 50, kPlotBottom = kHeight - 60;
constexpr size_t kMaxMarkedPoints = 100;
constexpr std::array<const char*, 10> kColors = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                 "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                                 "#bcbd22", "#17becf"};

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

// A log axis over less than 3 decades would get 1 to 3 ticks at whole
// decades and waste most of its height; ticks at m * 10^k (m of 1-2-5, or
// 1..9 under one decade) keep a handful and let the axis end close to the
// data. Returns the ticks from the last one <= lo to the first one >= hi
// (log10 space, lo < hi); fewer than 2 when lo and hi are on one tick.
std::vector<double> LogTicksInsideDecades(double lo, double hi) {
  static constexpr double kCoarse[] = {1, 2, 5}, kFine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::span<const double> mantissas =
      hi - lo >= 1 ? std::span<const double>(kCoarse) : std::span<const double>(kFine);
  std::vector<double> all;  // ascending, from below lo to above hi
  for (double k = std::floor(lo) - 1; k <= std::ceil(hi) + 1; ++k) {
    for (const double m : mantissas) all.push_back(k + std::log10(m));
  }
  constexpr double kSlack = 1e-9;  // a value on a tick is on it, not past it
  size_t first = 0;
  while (first + 1 < all.size() && all[first + 1] <= lo + kSlack) ++first;
  size_t last = first;
  while (last + 1 < all.size() && all[last] < hi - kSlack) ++last;
  return {all.begin() + static_cast<std::ptrdiff_t>(first),
          all.begin() + static_cast<std::ptrdiff_t>(last) + 1};
}

// The axis over `range`, widened to round tick values.
Axis MakeAxis(bool log, Range range) {
  Axis axis;
  axis.log = log;
  double lo = range ? range->first : 0.0, hi = range ? range->second : 1.0;
  if (log && lo < hi && hi - lo < 3) axis.ticks = LogTicksInsideDecades(lo, hi);
  if (axis.ticks.size() >= 2) {
    lo = axis.ticks.front();
    hi = axis.ticks.back();
  } else if (log) {
    axis.ticks.clear();
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

// The error bar's half-length at point i, or nullopt when it has none.
std::optional<double> ErrorAt(const PlotSeries& s, size_t i) {
  if (i >= s.y_err.size() || !std::isfinite(s.y_err[i]) || s.y_err[i] <= 0) return std::nullopt;
  return s.y_err[i];
}

// The ranges of the plottable points (and their error bars' ends) on each
// axis.
std::pair<Range, Range> DataRanges(const LinePlot& plot) {
  Range xr, yr;
  const auto extend = [](Range& r, std::optional<double> v) {
    if (!v) return;
    r = r ? std::pair(std::min(r->first, *v), std::max(r->second, *v)) : std::pair(*v, *v);
  };
  for (const PlotSeries& s : plot.series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      const auto ax = ToAxisSpace(s.x[i], plot.log_x);
      const auto ay = ToAxisSpace(s.y[i], plot.log_y);
      if (!ax || !ay) continue;
      extend(xr, ax);
      extend(yr, ay);
      if (const auto e = ErrorAt(s, i)) {
        extend(yr, ToAxisSpace(s.y[i] + *e, plot.log_y));
        extend(yr, ToAxisSpace(s.y[i] - *e, plot.log_y));  // none on a log axis when <= 0
      }
    }
  }
  return {xr, yr};
}

// Lengths read true only from 0, so a linear y axis reaches it, unless that
// would squeeze the data into less than half the height: then the axis is
// zoomed and AppendAxisBreak marks it.
Range WithZeroWhenCheap(Range y) {
  if (y && y->first > 0 && y->first <= y->second / 2) y->first = 0;
  if (y && y->second < 0 && y->second >= y->first / 2) y->second = 0;
  return y;
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

// A y axis that does not reach 0 (log, or zoomed) gets a "//" across its
// line next to the end nearest 0, and a note above the plot saying why.
void AppendAxisBreak(std::string& svg, const Axis& y_axis) {
  const bool at_top = !y_axis.log && y_axis.hi < 0;
  if (!y_axis.log && y_axis.lo <= 0 && !at_top) return;
  const double py = at_top ? kPlotTop + 12 : kPlotBottom - 12;
  svg += fmt::format(
      "<g class=\"axis-break\" stroke=\"#000\" stroke-width=\"1.5\">"
      "<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"6\" fill=\"#fff\" stroke=\"none\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{4}\"/>"
      "<line x1=\"{0}\" y1=\"{5}\" x2=\"{3}\" y2=\"{2}\"/></g>\n",
      Num(kPlotLeft - 6), Num(py - 3), Num(py), Num(kPlotLeft + 6), Num(py - 6), Num(py + 6));
  const std::string note =
      y_axis.log ? "y axis: log scale (no 0)"
                 : fmt::format("y axis {} at {}, not 0", at_top ? "ends" : "starts",
                               y_axis.TickLabel(at_top ? y_axis.hi : y_axis.lo));
  svg += fmt::format(
      "<text class=\"axis-note\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555\">{}</text>\n",
      Num(kPlotLeft), Num(kPlotTop - 8), EscapeXml(note));
}

// Pixel coordinates of a point in axis space.
double PixelX(const Axis& x_axis, double ax) {
  return kPlotLeft + x_axis.Fraction(ax) * (kPlotRight - kPlotLeft);
}
double PixelY(const Axis& y_axis, double ay) {
  return kPlotBottom - y_axis.Fraction(ay) * (kPlotBottom - kPlotTop);
}

// The bar of y +- err at pixel column px: a vertical line with caps. On a
// log axis an end at or below 0 is drawn to the axis' bottom.
std::string ErrorBar(double px, double y, double err, const Axis& y_axis) {
  const auto top = y_axis.ToAxis(y + err);
  if (!top) return "";
  const double bottom = y_axis.ToAxis(y - err).value_or(y_axis.lo);
  const double pt = PixelY(y_axis, *top), pb = PixelY(y_axis, std::max(bottom, y_axis.lo));
  return fmt::format(
      "<path class=\"error-bar\" d=\"M{0} {1} L{0} {2} M{3} {1} L{4} {1} M{3} {2} L{4} {2}\" "
      "fill=\"none\" stroke-width=\"1\"/>",
      Num(px), Num(pt), Num(pb), Num(px - 4), Num(px + 4));
}

void AppendSeries(std::string& svg, const PlotSeries& s, const char* color, const Axis& x_axis,
                  const Axis& y_axis) {
  std::string path, markers, bars;
  bool pen_down = false;
  size_t plotted = 0;
  for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
    const auto ax = x_axis.ToAxis(s.x[i]);
    const auto ay = y_axis.ToAxis(s.y[i]);
    if (!ax || !ay) {
      pen_down = false;  // a gap where the data has none
      continue;
    }
    const double px = PixelX(x_axis, *ax), py = PixelY(y_axis, *ay);
    path += fmt::format("{}{} {} ", pen_down ? "L" : "M", Num(px), Num(py));
    pen_down = true;
    markers += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\"/>", Num(px), Num(py));
    if (const auto e = ErrorAt(s, i)) bars += ErrorBar(px, s.y[i], *e, y_axis);
    ++plotted;
  }
  if (!path.empty()) path.pop_back();
  svg += fmt::format("<g class=\"series\" fill=\"{0}\" stroke=\"{0}\">\n<title>{1}</title>\n",
                     color, EscapeXml(s.name));
  if (!path.empty()) {
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke-width=\"2\"{}/>\n", path,
                       s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  }
  if (!s.dashed && plotted <= kMaxMarkedPoints && !markers.empty()) svg += markers + "\n";
  if (!bars.empty()) svg += bars + "\n";
  svg += "</g>\n";
}

// A generous average advance of a 12px sans-serif character.
constexpr double kLegendCharWidth = 7;

size_t Utf8Length(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a continuation byte
  }));
}

const char* SeriesColor(const LinePlot& plot, size_t i) {
  const int own = plot.series[i].color;
  return kColors[(own >= 0 ? static_cast<size_t>(own) : i) % kColors.size()];
}

void AppendLegend(std::string& svg, const LinePlot& plot) {
  svg += "<g class=\"legend\" font-size=\"12\">\n";
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const char* color = SeriesColor(plot, i);
    const bool dashed = plot.series[i].dashed;
    const double y = kPlotTop + 10 + 20 * static_cast<double>(i);
    svg += fmt::format(
        "<g class=\"legend-entry\"><line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
        "stroke=\"{3}\" stroke-width=\"2\"{4}/>{5}<text x=\"{6}\" y=\"{7}\">{8}</text></g>\n",
        Num(kPlotRight + 15), Num(y), Num(kPlotRight + 45), color,
        dashed ? " stroke-dasharray=\"6 4\"" : "",
        dashed ? "" : fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>",
                                  Num(kPlotRight + 30), Num(y), color),
        Num(kPlotRight + 52), Num(y + 4), EscapeXml(plot.series[i].name));
  }
  svg += "</g>\n";
}

}  // namespace

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

std::string RenderLinePlotSvg(const LinePlot& plot) {
  const auto [x_range, y_range] = DataRanges(plot);
  const Axis x_axis = MakeAxis(plot.log_x, x_range);
  const Axis y_axis = MakeAxis(plot.log_y, plot.log_y ? y_range : WithZeroWhenCheap(y_range));

  // The picture widens so that the longest legend name is not cut off.
  size_t longest = 0;
  for (const PlotSeries& s : plot.series) longest = std::max(longest, Utf8Length(s.name));
  const double width = std::max(
      kMinWidth, std::ceil(kPlotRight + 60 + kLegendCharWidth * static_cast<double>(longest)));

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  svg += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\">\n",
      width, kHeight);
  svg += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width, kHeight);
  svg += fmt::format(
      "<text class=\"title\" x=\"{}\" y=\"28\" text-anchor=\"middle\" "
      "font-size=\"16\">{}</text>\n",
      Num((kPlotLeft + kPlotRight) / 2), EscapeXml(plot.title));
  AppendAxes(svg, x_axis, y_axis);
  AppendAxisBreak(svg, y_axis);
  svg += fmt::format(
      "<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" "
      "font-size=\"13\">{}</text>\n",
      Num((kPlotLeft + kPlotRight) / 2), Num(kHeight - 15), EscapeXml(plot.x_label));
  svg += fmt::format(
      "<text class=\"y-label\" x=\"20\" y=\"{0}\" text-anchor=\"middle\" "
      "font-size=\"13\" transform=\"rotate(-90 20 {0})\">{1}</text>\n",
      Num((kPlotTop + kPlotBottom) / 2), EscapeXml(plot.y_label));
  for (size_t i = 0; i < plot.series.size(); ++i) {
    AppendSeries(svg, plot.series[i], SeriesColor(plot, i), x_axis, y_axis);
  }
  AppendLegend(svg, plot);
  svg += "</svg>\n";
  return svg;
}

}  // namespace h2o
