#include "report/svg_heatmap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/svg_plot.h"

namespace h2o {
namespace {

constexpr double kLeft = 110, kTop = 60, kCell = 56, kCellHeight = 34, kScaleWidth = 90;

// Red (0) -> yellow (0.5) -> green (1).
std::string Colour(double v) {
  v = std::clamp(v, 0.0, 1.0);
  const double r = v < 0.5 ? 215 : 215 - (v - 0.5) * 2 * (215 - 26);
  const double g = v < 0.5 ? 48 + v * 2 * (190 - 48) : 190 - (v - 0.5) * 2 * (190 - 150);
  const double b = v < 0.5 ? 39 + v * 2 * (60 - 39) : 60 + (v - 0.5) * 2 * (80 - 60);
  return fmt::format("rgb({},{},{})", std::lround(r), std::lround(g), std::lround(b));
}

}  // namespace

std::string RenderHeatmapSvg(const Heatmap& map) {
  const double width = kLeft + kCell * static_cast<double>(map.columns.size()) + kScaleWidth + 20;
  const double height = kTop + kCellHeight * static_cast<double>(map.rows.size()) + 60;
  std::string svg = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<defs><pattern id=\"none\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      "<path d=\"M0 6L6 0\" stroke=\"#bbb\"/></pattern></defs>\n"
      "<text x=\"{2}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{3}</text>\n",
      width, height, kLeft, EscapeXml(map.title));
  for (size_t r = 0; r < map.rows.size(); ++r) {
    const double y = kTop + kCellHeight * static_cast<double>(r);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 8,
                       y + kCellHeight / 2 + 4, EscapeXml(map.rows[r]));
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const double x = kLeft + kCell * static_cast<double>(c);
      const double v = r < map.values.size() && c < map.values[r].size()
                           ? map.values[r][c]
                           : std::nan("");
      const bool has = std::isfinite(v);
      svg += fmt::format(
          "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"white\"/>\n",
          x, y, kCell, kCellHeight, has ? Colour(v) : std::string("url(#none)"));
      if (has) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:.2f}</text>\n",
                           x + kCell / 2, y + kCellHeight / 2 + 4, v);
      }
    }
  }
  const double bottom = kTop + kCellHeight * static_cast<double>(map.rows.size());
  for (size_t c = 0; c < map.columns.size(); ++c) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       kLeft + kCell * (static_cast<double>(c) + 0.5), bottom + 18,
                       EscapeXml(map.columns[c]));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     kLeft + kCell * static_cast<double>(map.columns.size()) / 2, bottom + 40,
                     EscapeXml(map.x_label));
  svg += fmt::format(
      "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      kTop + (bottom - kTop) / 2, EscapeXml(map.y_label));
  // The scale: 0 at the bottom, 1 at the top.
  const double sx = kLeft + kCell * static_cast<double>(map.columns.size()) + 24;
  const double span = std::max(kCellHeight * 3, bottom - kTop);
  for (int i = 0; i < 20; ++i) {
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"{}\" fill=\"{}\"/>\n", sx,
                       kTop + span * i / 20.0, span / 20.0 + 0.5, Colour(1.0 - (i + 0.5) / 20.0));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\">1</text>\n<text x=\"{}\" y=\"{}\">0</text>\n",
                     sx + 22, kTop + 10, sx + 22, kTop + span);
  svg += "</svg>\n";
  return svg;
}

}  // namespace h2o
