#include "analysis/attention_stats.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "core/status.h"

namespace h2o {

RowSparsity CountSparseEntries(std::span<const int32_t> key_positions, std::span<const float> probs,
                               int32_t query_pos, double ratio) {
  H2O_CHECK(key_positions.size() == probs.size());
  auto unmasked = [&](size_t s) { return key_positions[s] >= 0 && key_positions[s] <= query_pos; };
  float max = 0.0f;
  for (size_t s = 0; s < probs.size(); ++s) {
    if (unmasked(s)) max = std::max(max, probs[s]);
  }
  const double threshold = ratio * max;
  RowSparsity row;
  for (size_t s = 0; s < probs.size(); ++s) {
    if (!unmasked(s)) continue;
    ++row.entries;
    row.below += probs[s] < threshold;
  }
  return row;
}

PowerLawFit FitPowerLaw(std::span<const double> descending_scores, int32_t max_ranks) {
  PowerLawFit fit;
  const int32_t n_ranks = static_cast<int32_t>(descending_scores.size());
  const int32_t last = max_ranks > 0 ? std::min(max_ranks, n_ranks) : n_ranks;
  while (fit.n_points < last && descending_scores[fit.n_points] > 0.0) ++fit.n_points;
  if (fit.n_points < 2) {
    fit.alpha = fit.log_c = fit.r_squared = std::numeric_limits<double>::quiet_NaN();
    return fit;
  }
  auto weight = [](int32_t i) { return std::log1p(1.0 / (i + 1.0)); };  // rank i + 1
  double sum_w = 0.0, mean_x = 0.0, mean_y = 0.0;
  for (int32_t i = 0; i < fit.n_points; ++i) {
    sum_w += weight(i);
    mean_x += weight(i) * std::log(i + 1.0);
    mean_y += weight(i) * std::log(descending_scores[i]);
  }
  mean_x /= sum_w;
  mean_y /= sum_w;
  double sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (int32_t i = 0; i < fit.n_points; ++i) {
    const double dx = std::log(i + 1.0) - mean_x;
    const double dy = std::log(descending_scores[i]) - mean_y;
    sxx += weight(i) * dx * dx;
    sxy += weight(i) * dx * dy;
    syy += weight(i) * dy * dy;
  }
  const double slope = sxy / sxx;
  fit.alpha = -slope;
  fit.log_c = mean_y - slope * mean_x;
  // Residual sum of squares of the least-squares line: syy - slope * sxy.
  // A series flat to rounding (syy at the weights' rounding error) lies on
  // its line.
  const double flat = 1e-24 * sum_w * (1.0 + mean_y * mean_y);
  fit.r_squared = syy > flat ? 1.0 - std::max(0.0, syy - slope * sxy) / syy : 1.0;
  return fit;
}

std::vector<double> SortedDescending(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  return sorted;
}

std::vector<int32_t> TopKPositions(std::span<const double> scores, int32_t k) {
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t n = std::min(scores.size(), static_cast<size_t>(std::max(k, 0)));
  // Stable: equal scores keep ascending position order, so the lower wins.
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return scores[a] > scores[b]; });
  order.resize(n);
  std::sort(order.begin(), order.end());
  return order;
}

double OverlapFraction(std::span<const int32_t> a, std::span<const int32_t> b) {
  const size_t denominator = std::max(a.size(), b.size());
  if (denominator == 0) return 0.0;
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) {
      ++common;
      ++i;
      ++j;
    } else if (a[i] < b[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(denominator);
}

}  // namespace h2o
