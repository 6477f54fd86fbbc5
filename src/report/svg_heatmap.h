// A grid of values in [0, 1] as a standalone SVG 1.1 heatmap: the
// needle-in-a-haystack picture (needle depth down, context length across,
// accuracy as colour) that long-context evaluations are read by.
#pragma once

#include <string>
#include <vector>

namespace h2o {

struct Heatmap {
  std::string title, x_label, y_label;
  std::vector<std::string> columns;  // x: left to right
  std::vector<std::string> rows;     // y: top to bottom
  // [rows][columns]; NaN: no data (drawn hatched grey, no number).
  std::vector<std::vector<double>> values;
};

// Each cell coloured from red (0) through yellow to green (1), with its
// value printed in it to two decimals; a colour scale on the right. All
// text XML-escaped. Pure; safe from any thread.
std::string RenderHeatmapSvg(const Heatmap& map);

}  // namespace h2o
