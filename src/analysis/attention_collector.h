// AttentionCollector: an AttentionObserver that reduces the attention
// probabilities of a run to what `h2o analyze` reports, as they stream by:
// per (layer, query head) the mean row sparsity and the accumulated
// attention each key position received. It never stores the attention
// matrices, so its memory is n_layer * n_head * n_positions doubles, not
// times n_positions again.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/attention_observer.h"

namespace h2o {

class AttentionCollector final : public AttentionObserver {
 public:
  // Every position the run reports (query and key) must be in [0,
  // n_positions). sparsity_ratio: an entry is sparse when it is below this
  // fraction of its row's largest entry (the paper: 0.01).
  AttentionCollector(int32_t n_layer, int32_t n_head, int32_t n_positions, double sparsity_ratio);

  // Thread-safe for calls with different (layer, head): each pair has its
  // own storage, so no locks.
  void OnAttention(int32_t layer, int32_t head, int32_t query_pos,
                   std::span<const int32_t> key_positions, std::span<const float> probs) override;

  int32_t n_layer() const { return n_layer_; }
  int32_t n_head() const { return n_head_; }
  int32_t n_positions() const { return n_positions_; }
  double sparsity_ratio() const { return sparsity_ratio_; }

  // Query rows observed for (layer, head).
  int64_t rows(int32_t layer, int32_t head) const;
  // Mean over the observed rows of each row's fraction of sparse entries
  // (RowSparsity::fraction); 0 before any row.
  double sparsity(int32_t layer, int32_t head) const;
  // [n_positions]: per key position, the sum of its attention over the
  // observed rows (every later query, and its own).
  std::span<const double> accumulated(int32_t layer, int32_t head) const;

 private:
  // One cache line each: heads on different threads do not share lines.
  struct alignas(64) HeadTotals {
    double sparsity_sum = 0.0;
    int64_t rows = 0;
  };
  size_t Index(int32_t layer, int32_t head) const;

  int32_t n_layer_;
  int32_t n_head_;
  int32_t n_positions_;
  double sparsity_ratio_;
  std::vector<HeadTotals> totals_;   // [n_layer][n_head]
  std::vector<double> accumulated_;  // [n_layer][n_head][n_positions]
};

}  // namespace h2o
