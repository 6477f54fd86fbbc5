// The statistics of attention probabilities that the H2O paper (Zhang et
// al. 2023) plots in Figure 2: row sparsity (2a), the power law of
// accumulated attention over key tokens (2b), and the overlap of two
// heavy-hitter sets (2d). Pure functions of their arguments, thread-safe;
// `h2o analyze` (eval/attention_analysis.h) applies them to a model.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace h2o {

struct RowSparsity {
  int32_t entries = 0;  // unmasked entries of the row
  int32_t below = 0;    // of those, how many are < ratio * the row's largest
  double fraction() const { return entries > 0 ? static_cast<double>(below) / entries : 0.0; }
};

// One attention row as the forward pass reports it (AttentionObserver):
// only entries whose key position is in [0, query_pos] count. Requires
// equal span sizes.
RowSparsity CountSparseEntries(std::span<const int32_t> key_positions, std::span<const float> probs,
                               int32_t query_pos, double ratio);

// ln(score) = log_c - alpha * ln(rank), fitted by weighted least squares,
// every rank r weighted by the width of log rank it covers, ln((r+1)/r): so
// each stretch of log rank (ranks 1-10, 10-100, ...) counts the same, and
// the many tail ranks do not outweigh the heavy hitters at the head, as
// they do in a plain fit (where the line can miss rank 1 several-fold).
struct PowerLawFit {
  double alpha = 0.0;      // the exponent (positive for a falling curve)
  double log_c = 0.0;      // natural log of the score at rank 1 on the line
  double r_squared = 0.0;  // weighted, in log-log space; 1 when all points are on the line
  int32_t n_points = 0;    // ranks used: 1..n_points
};

// Fits scores sorted in descending order (scores[r-1] is rank r's) over
// ranks 1..max_ranks (all, when max_ranks <= 0) that have a positive score
// (a prefix of the ranks, since they are sorted). With fewer than 2 such
// ranks alpha, log_c and r_squared are NaN.
PowerLawFit FitPowerLaw(std::span<const double> descending_scores, int32_t max_ranks = 0);

std::vector<double> SortedDescending(std::span<const double> values);

// The k positions (indices) with the largest scores, in ascending position
// order; ties go to the lower position. k is capped at scores.size().
std::vector<int32_t> TopKPositions(std::span<const double> scores, int32_t k);

// |a intersect b| / max(|a|, |b|) for sets given as sorted, distinct
// positions; 0 when both are empty.
double OverlapFraction(std::span<const int32_t> a, std::span<const int32_t> b);

}  // namespace h2o
