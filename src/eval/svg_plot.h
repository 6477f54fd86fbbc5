// Line charts as standalone SVG 1.1 files, so eval sweeps (metric vs KV
// budget, one line per policy) and attention analyses (power-law rank
// plots) produce a picture a person can open in any browser, with no
// plotting library or script in between.
#pragma once

#include <string>
#include <vector>

namespace h2o {

struct PlotSeries {
  std::string name;
  std::vector<double> x, y;  // paired by index; extra entries in the longer one are ignored
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool log_x = false, log_y = false;  // base-10 axes with a tick per decade
};

// The whole SVG document. Each series is one <g class="series"> holding a
// <path> through its points in the given order and, when it has at most 100
// points (beyond that markers would hide the line), a circle per point;
// colours cycle through 10. A point is skipped, breaking the line there,
// when a coordinate is not finite, beyond +-1e300, or, on a log axis, not
// > 0. Axes span the
// plotted points, widened to round tick values; a single point, a constant
// series or no plottable point at all still gets a valid, non-degenerate
// axis. The legend lists every series, plotted or not. All text (title,
// labels, names) is XML-escaped, and control characters XML 1.0 forbids
// are dropped. Pure; safe from any thread.
std::string RenderLinePlotSvg(const LinePlot& plot);

}  // namespace h2o
