#include "analysis/attention_collector.h"

#include "analysis/attention_stats.h"
#include "core/status.h"

namespace h2o {

AttentionCollector::AttentionCollector(int32_t n_layer, int32_t n_head, int32_t n_positions,
                                       double sparsity_ratio)
    : n_layer_(n_layer),
      n_head_(n_head),
      n_positions_(n_positions),
      sparsity_ratio_(sparsity_ratio),
      totals_(static_cast<size_t>(n_layer) * n_head),
      accumulated_(static_cast<size_t>(n_layer) * n_head * n_positions, 0.0) {
  H2O_CHECK(n_layer >= 1 && n_head >= 1 && n_positions >= 1);
}

size_t AttentionCollector::Index(int32_t layer, int32_t head) const {
  H2O_CHECK(layer >= 0 && layer < n_layer_ && head >= 0 && head < n_head_);
  return static_cast<size_t>(layer) * n_head_ + head;
}

void AttentionCollector::OnAttention(int32_t layer, int32_t head, int32_t query_pos,
                                     std::span<const int32_t> key_positions,
                                     std::span<const float> probs) {
  H2O_CHECK(query_pos >= 0 && query_pos < n_positions_);
  const size_t index = Index(layer, head);
  HeadTotals& totals = totals_[index];
  totals.sparsity_sum +=
      CountSparseEntries(key_positions, probs, query_pos, sparsity_ratio_).fraction();
  ++totals.rows;
  double* acc = &accumulated_[index * n_positions_];
  for (size_t s = 0; s < probs.size(); ++s) {
    const int32_t pos = key_positions[s];
    if (pos >= 0 && pos <= query_pos) acc[pos] += probs[s];
  }
}

int64_t AttentionCollector::rows(int32_t layer, int32_t head) const {
  return totals_[Index(layer, head)].rows;
}

double AttentionCollector::sparsity(int32_t layer, int32_t head) const {
  const HeadTotals& totals = totals_[Index(layer, head)];
  return totals.rows > 0 ? totals.sparsity_sum / static_cast<double>(totals.rows) : 0.0;
}

std::span<const double> AttentionCollector::accumulated(int32_t layer, int32_t head) const {
  return {&accumulated_[Index(layer, head) * n_positions_], static_cast<size_t>(n_positions_)};
}

}  // namespace h2o
