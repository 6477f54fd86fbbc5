// The attention analysis behind `h2o analyze`: the H2O paper's Figure 2
// statistics for one token sequence on one model.
//
// Two runs over the sequence:
//  1. full cache (no eviction), in chunks of options.session.max_chunk (the
//     probabilities do not depend on the chunk size), with an
//     AttentionCollector attached: per layer and query head the row
//     sparsity (2a) and the attention accumulated by every key token (2b);
//  2. the H2O cache of options.local (DESIGN.md section 3), one token at a
//     time (the paper's Algorithm 1): the heavy hitters it holds at the end
//     were chosen from local statistics only, and are compared (2d) with
//     the top-k tokens by attention accumulated over the whole sequence
//     (run 1, summed over the KV head's query heads, as the cache sums
//     its scores), per layer and KV head, k = local.heavy.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/attention_collector.h"
#include "analysis/attention_stats.h"
#include "core/status.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/session.h"

namespace h2o {

struct AttentionAnalysisOptions {
  // Threads, KV element type and chunk of run 1 (max_chunk 0: the whole
  // sequence at once); kv, n_ctx and pos-shift are set by the analysis.
  SessionOptions session;
  // Run 2's cache: an h2o plan with heavy >= 1 (recent may be 0). Its
  // heavy hitters are the tokens it holds outside the recent window.
  KvPlan local;
  double sparsity_ratio = 0.01;  // sparse: below this fraction of the row max
  // The power laws are fitted on the head of the ranks, 1..ceil(fit_ranks *
  // tokens): there the accumulated attention follows one (R^2 about 0.95 on
  // the bundled model), while the tail falls off faster, its tokens too
  // late in the text for many queries to attend them.
  double fit_ranks = 0.5;
  // Called with the number of tokens just processed (both runs count, so
  // the total is 2 * ids.size()); may be empty.
  std::function<void(int64_t)> on_tokens;
};

struct LayerAnalysis {
  // The layer's sliding window (0: global). A windowed layer's attention is
  // sparse by construction and its cache keeps only the window, so the
  // means over layers leave it out when the model has global layers.
  int32_t window = 0;
  double sparsity = 0.0;              // mean of head_sparsity
  std::vector<double> head_sparsity;  // [n_head]
  // Rank r (1-based) at index r-1: the mean over query heads of each
  // head's r-th largest accumulated attention. [n_tokens]
  std::vector<double> rank_scores;
  PowerLawFit fit;                      // of rank_scores
  std::vector<PowerLawFit> head_fits;   // [n_head], of each head's own ranking
  double overlap = 0.0;                 // mean of kv_head_overlap
  std::vector<double> kv_head_overlap;  // [n_head_kv]: OverlapFraction(local, global top-k)
};

struct AttentionAnalysis {
  int32_t n_tokens = 0;
  int32_t n_layer = 0, n_head = 0, n_head_kv = 0;
  double sparsity_ratio = 0.0;
  double fit_ranks = 0.0;
  int32_t heavy = 0, recent = 0;  // run 2's plan: k = heavy
  std::vector<LayerAnalysis> layers;
};

// Errors: fewer than 2 tokens, a plan that is not h2o or has heavy < 1,
// and Session errors (bad options, bad token ids).
Result<AttentionAnalysis> AnalyzeAttention(const Model& model, std::span<const int32_t> ids,
                                           const AttentionAnalysisOptions& options);

// One layer's statistics from run 1's collector and, per KV head, the
// heavy hitters run 2 kept (sorted positions); k: size of the global
// top-k; fit_ranks: as AttentionAnalysisOptions'. Pure; exposed for tests.
LayerAnalysis SummarizeLayer(const AttentionCollector& collector, int32_t layer,
                             const std::vector<std::vector<int32_t>>& local_heavy, int32_t k,
                             double fit_ranks);

}  // namespace h2o
