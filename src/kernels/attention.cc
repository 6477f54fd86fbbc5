#include "kernels/attention.h"

#include <algorithm>
#include <limits>

#include "core/status.h"
#include "kernels/attention_runs.h"
#include "kernels/dispatch.h"
#include "kernels/flush_denormals.h"

namespace h2o::kernels {
namespace {

// The runs of slots visible to a query at query_pos (AttendGroup's rule).
template <typename Fn>
void ForEachVisibleRun(const KvSlots& kv, int32_t query_pos, int32_t window, Fn fn) {
  ForEachRunInPositions(kv, OldestVisible(query_pos, window), query_pos, fn);
}

}  // namespace

void AttendGroup(const float* q, int32_t n_group, const KvSlots& kv, int32_t query_pos,
                 int32_t window, float scale, const GroupAttentionOutputs& outputs) {
  AttendGroup(ActiveKernels(), q, n_group, kv, query_pos, window, scale, outputs);
}

void AttendGroup(const KernelTable& kt, const float* q, int32_t n_group, const KvSlots& kv,
                 int32_t query_pos, int32_t window, float scale, const GroupAttentionOutputs& o) {
  H2O_CHECK(window >= 0);
  const ScopedFlushDenormals flush;
  const int32_t d = kv.head_dim;
  const int32_t n = kv.n_slots;
  const ScoreRowsFn score_rows = kt.KvFor(kv.k_type).score_rows;
  const WeightedSumRowsFn weighted_sum_rows = kt.KvFor(kv.v_type).weighted_sum_rows;

  // Masked (-inf) logits become exactly 0 in the softmax.
  std::fill(o.probs, o.probs + static_cast<size_t>(n_group) * n,
            -std::numeric_limits<float>::infinity());
  bool any_visible = false;
  ForEachVisibleRun(kv, query_pos, window, [&](int32_t begin, int32_t end) {
    score_rows(q, n_group, kv.KRow(begin), end - begin, d, scale, o.probs + begin, n);
    any_visible = true;
  });
  // All -inf would be NaN probabilities: a cache that lost the query's own
  // token, caught here rather than as NaN logits.
  H2O_CHECK(any_visible);
  for (int32_t h = 0; h < n_group; ++h) {
    kt.softmax(o.probs + static_cast<size_t>(h) * n, n);
    std::fill(o.out + static_cast<size_t>(h) * d, o.out + static_cast<size_t>(h + 1) * d, 0.0f);
  }
  ForEachVisibleRun(kv, query_pos, window, [&](int32_t begin, int32_t end) {
    weighted_sum_rows(o.probs + begin, n, n_group, kv.VRow(begin), end - begin, d, o.out);
  });
  if (o.score_accum == nullptr && o.step_attention == nullptr) return;
  // The scores from the same probabilities, summed over the group.
  ForEachVisibleRun(kv, query_pos, window, [&](int32_t begin, int32_t end) {
    for (int32_t s = begin; s < end; ++s) {
      float group_sum = 0.0f;
      for (int32_t h = 0; h < n_group; ++h) group_sum += o.probs[static_cast<size_t>(h) * n + s];
      if (o.score_accum != nullptr) o.score_accum[s] += group_sum;
      if (o.step_attention != nullptr) o.step_attention[s] += group_sum;
    }
  });
}

}  // namespace h2o::kernels
