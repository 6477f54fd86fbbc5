#include "analysis/attention_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "report/svg_plot.h"

namespace h2o {
namespace {

nlohmann::json FitJson(const PowerLawFit& fit) {
  if (!std::isfinite(fit.alpha)) return nullptr;
  return {{"alpha", fit.alpha},
          {"log_c", fit.log_c},
          {"r_squared", fit.r_squared},
          {"n_points", fit.n_points}};
}

double ChanceOverlap(const AttentionAnalysis& a) {
  return a.n_tokens > 0 ? std::min(1.0, static_cast<double>(a.heavy) / a.n_tokens) : 0.0;
}

bool HasGlobalLayer(const AttentionAnalysis& a) {
  return std::any_of(a.layers.begin(), a.layers.end(),
                     [](const LayerAnalysis& l) { return l.window == 0; });
}

// Over the global layers, or every layer when all are windowed.
template <typename Field>
double MeanOverLayers(const AttentionAnalysis& a, Field field) {
  const bool global_only = HasGlobalLayer(a);
  double sum = 0.0;
  size_t n = 0;
  for (const LayerAnalysis& layer : a.layers) {
    if (global_only && layer.window > 0) continue;
    sum += field(layer);
    ++n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

// x = layer index, y = field(layer).
template <typename Field>
PlotSeries PerLayerSeries(const AttentionAnalysis& a, std::string name, Field field) {
  PlotSeries s{std::move(name), {}, {}};
  for (size_t l = 0; l < a.layers.size(); ++l) {
    s.x.push_back(static_cast<double>(l));
    s.y.push_back(field(a.layers[l]));
  }
  return s;
}

// The fitted score = e^log_c * rank^-alpha over the fitted ranks, dashed in
// its layer's colour; a straight line on the log-log plot, so its two ends
// draw it. Nullopt for a fit of fewer than 2 points.
std::optional<PlotSeries> FitSeries(size_t layer, const PowerLawFit& fit, int color) {
  if (!std::isfinite(fit.alpha) || fit.n_points < 2) return std::nullopt;
  const double c = std::exp(fit.log_c), last = static_cast<double>(fit.n_points);
  return PlotSeries{fmt::format("layer {} fit: {:.3g} * rank^{:.2f} (R^2 {:.2f})", layer, c,
                                -fit.alpha, fit.r_squared),
                    {1.0, last},
                    {c, c * std::pow(last, -fit.alpha)},
                    {},
                    true,
                    color};
}

}  // namespace

nlohmann::json AnalysisJson(const AttentionAnalysis& a, const AnalysisSource& source) {
  nlohmann::json layers = nlohmann::json::array();
  for (size_t l = 0; l < a.layers.size(); ++l) {
    const LayerAnalysis& layer = a.layers[l];
    nlohmann::json head_fits = nlohmann::json::array();
    for (const PowerLawFit& fit : layer.head_fits) head_fits.push_back(FitJson(fit));
    layers.push_back({{"layer", l},
                      {"window", layer.window},
                      {"sparsity", layer.sparsity},
                      {"head_sparsity", layer.head_sparsity},
                      {"power_law", FitJson(layer.fit)},
                      {"head_power_law", head_fits},
                      {"rank_scores", layer.rank_scores},
                      {"heavy_overlap", layer.overlap},
                      {"kv_head_overlap", layer.kv_head_overlap}});
  }
  const double mean_alpha = MeanOverLayers(a, [](const LayerAnalysis& l) { return l.fit.alpha; });
  const double mean_r2 = MeanOverLayers(a, [](const LayerAnalysis& l) { return l.fit.r_squared; });
  return {
      {"model", source.model},
      {"input", source.input},
      {"input_tokens", source.input_tokens},
      {"tokens", a.n_tokens},
      {"n_layer", a.n_layer},
      {"n_head", a.n_head},
      {"n_head_kv", a.n_head_kv},
      {"sparsity_threshold", a.sparsity_ratio},
      {"power_law_fit",
       fmt::format("ln(score) = log_c - alpha ln(rank), least squares weighted evenly in ln(rank) "
                   "(rank r by ln((r+1)/r)) over ranks 1..n_points: the head, {:g} of the ranks, "
                   "those with a positive score",
                   a.fit_ranks)},
      {"heavy_hitters",
       {{"kv", fmt::format("h2o:heavy={},recent={}", a.heavy, a.recent)},
        {"k", a.heavy},
        {"recent", a.recent},
        {"chance_overlap", ChanceOverlap(a)}}},
      {"layers", layers},
      {"mean",
       {{"over", HasGlobalLayer(a) ? "global layers (window 0)" : "all layers"},
        {"sparsity", MeanOverLayers(a, [](const LayerAnalysis& l) { return l.sparsity; })},
        {"alpha", std::isfinite(mean_alpha) ? nlohmann::json(mean_alpha) : nlohmann::json()},
        {"r_squared", std::isfinite(mean_r2) ? nlohmann::json(mean_r2) : nlohmann::json()},
        {"heavy_overlap", MeanOverLayers(a, [](const LayerAnalysis& l) { return l.overlap; })}}}};
}

std::string SparsitySvg(const AttentionAnalysis& a) {
  LinePlot plot;
  plot.title = fmt::format("Attention sparsity per layer ({} tokens)", a.n_tokens);
  plot.x_label = "layer";
  plot.y_label = fmt::format("fraction of entries < {:g}% of the row max", 100 * a.sparsity_ratio);
  plot.series.push_back(
      PerLayerSeries(a, "sparsity", [](const LayerAnalysis& l) { return l.sparsity; }));
  return RenderLinePlotSvg(plot);
}

std::string PowerLawSvg(const AttentionAnalysis& a) {
  LinePlot plot;
  plot.title = fmt::format("Accumulated attention by rank ({} tokens)", a.n_tokens);
  plot.x_label = "rank of key token";
  plot.y_label = "accumulated attention (mean over heads)";
  plot.log_x = plot.log_y = true;
  const size_t n_layer = a.layers.size();
  constexpr size_t kMaxLines = 8;
  const size_t n_lines = std::min(n_layer, kMaxLines);
  size_t previous = SIZE_MAX;
  for (size_t i = 0; i < n_lines; ++i) {
    const size_t l = n_lines > 1 ? i * (n_layer - 1) / (n_lines - 1) : 0;
    if (l == previous) continue;
    previous = l;
    const LayerAnalysis& layer = a.layers[l];
    const int color = static_cast<int>(i);
    PlotSeries s{fmt::format("layer {}", l), {}, {}, {}, false, color};
    for (size_t r = 0; r < layer.rank_scores.size(); ++r) {
      s.x.push_back(static_cast<double>(r + 1));
      s.y.push_back(layer.rank_scores[r]);
    }
    plot.series.push_back(std::move(s));
    if (std::optional<PlotSeries> fit = FitSeries(l, layer.fit, color)) {
      plot.series.push_back(std::move(*fit));
    }
  }
  return RenderLinePlotSvg(plot);
}

std::string HeavyOverlapSvg(const AttentionAnalysis& a) {
  LinePlot plot;
  plot.title = fmt::format("Heavy hitters of h2o:heavy={},recent={} vs the top {} of {} tokens",
                           a.heavy, a.recent, a.heavy, a.n_tokens);
  plot.x_label = "layer";
  plot.y_label = "overlap fraction";
  plot.series.push_back(
      PerLayerSeries(a, "h2o (local)", [](const LayerAnalysis& l) { return l.overlap; }));
  const double chance = ChanceOverlap(a);
  plot.series.push_back(
      PerLayerSeries(a, "chance (k / T)", [chance](const LayerAnalysis&) { return chance; }));
  return RenderLinePlotSvg(plot);
}

}  // namespace h2o
