// What `h2o analyze` writes: the JSON report and the SVG plots of an
// AttentionAnalysis (eval/attention_analysis.h).
//
// analysis.json (AnalysisJson):
//   model             string, the model file as given
//   input             string, the text or token file as given
//   input_tokens      tokens in the input (before cutting to the context)
//   tokens            tokens analyzed (T)
//   n_layer, n_head, n_head_kv
//   sparsity_threshold   an entry is sparse when < this * its row's max (0.01)
//   power_law_fit     how exponents were fitted (text, see below)
//   heavy_hitters     {"kv": the h2o plan of the local run,
//                      "k": heavy-hitter set size, "recent": its window,
//                      "chance_overlap": k / T, the expected overlap of a
//                      uniformly random set of k positions}
//   layers            [n_layer] objects:
//     layer           index
//     sparsity        mean over heads and query rows of the sparse fraction
//     head_sparsity   [n_head]
//     power_law       {alpha, log_c, r_squared, n_points} of rank_scores
//     head_power_law  [n_head] of the same, each head's own ranking
//     rank_scores     [T]: rank r at index r-1, mean over heads of the r-th
//                     largest attention a key token accumulated (over all
//                     queries at or after it, its own included)
//     heavy_overlap   mean of kv_head_overlap
//     kv_head_overlap [n_head_kv]: |local heavy hitters & global top-k| / k
//   mean              {sparsity, alpha, r_squared, heavy_overlap}: means
//                     over layers
// Exponents: ln(score) = log_c - alpha ln(rank), least squares weighted
// evenly in ln(rank) (analysis/attention_stats.h) over ranks 1..n_points:
// the head of the ranks (AttentionAnalysisOptions::fit_ranks, half of T by
// default) that have a positive score. A fit with fewer than 2 points is
// null.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/attention_analysis.h"

namespace h2o {

struct AnalysisSource {
  std::string model;
  std::string input;
  int64_t input_tokens = 0;
};

nlohmann::json AnalysisJson(const AttentionAnalysis& analysis, const AnalysisSource& source);

// Sparsity per layer (one line).
std::string SparsitySvg(const AttentionAnalysis& analysis);
// Accumulated attention vs rank, log-log, one line per layer (at most 8
// layers, evenly spaced, first and last included), each followed by its
// fitted power law as a dashed line in the same colour, named with its
// parameters ("layer 2 fit: 0.42 * rank^-1.05 (R^2 0.97)").
std::string PowerLawSvg(const AttentionAnalysis& analysis);
// Heavy-hitter overlap per layer, with the chance level k / T.
std::string HeavyOverlapSvg(const AttentionAnalysis& analysis);

}  // namespace h2o
