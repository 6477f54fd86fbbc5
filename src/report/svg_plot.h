// Line charts as standalone SVG 1.1 files, so eval sweeps (metric vs KV
// budget, one line per policy) and attention analyses (power-law rank
// plots) produce a picture a person can open in any browser, with no
// plotting library or script in between.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace h2o {

struct PlotSeries {
  std::string name;
  std::vector<double> x, y;  // paired by index; extra entries in the longer one are ignored
  // Half-length of an error bar at each point (one standard error), paired
  // by index; a missing, non-finite or non-positive entry draws no bar.
  std::vector<double> y_err = {};
  bool dashed = false;  // a derived line (a fit): dashed, without markers
  int color = -1;       // palette index; -1: the series' own position
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool log_x = false, log_y = false;  // base-10 axes with a tick per decade
};

// The whole SVG document. Each series is one <g class="series"> holding a
// <path> through its points in the given order and, when it has at most 100
// points (beyond that markers would hide the line) and is not dashed, a
// circle per point, plus one <path class="error-bar"> per point with a
// y_err (clipped to the axis on a log scale); colours cycle through 10. A
// point is skipped, breaking the line there, when a coordinate is not
// finite, beyond +-1e300, or, on a log axis, not > 0. Axes span the plotted
// points and their error bars, widened to round tick values (a log axis
// spanning under 3 decades gets 1-2-5 or 1..9 ticks inside the decades); a
// linear y axis also reaches 0 when that leaves the data at least half the
// height. A y axis that does not reach 0 (a log axis, or a zoomed linear
// one) carries a <g class="axis-break"> mark on its line and a
// <text class="axis-note"> saying so. A single point, a constant series or
// no plottable point at all still gets a valid, non-degenerate axis. The
// legend lists every series, plotted or not; the picture is 760 x 460,
// wider when a legend name needs the room. All text (title, labels,
// names) is XML-escaped, and control characters XML 1.0 forbids are
// dropped. Pure; safe from any thread.
std::string RenderLinePlotSvg(const LinePlot& plot);

// Text for SVG (XML 1.0): markup characters escaped, the control
// characters XML forbids dropped.
std::string EscapeXml(std::string_view text);

}  // namespace h2o
