#include "kernels/attention.h"

#include <algorithm>
#include <limits>

#include "core/status.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {
namespace {

// Calls fn(begin, end) for each maximal run of slots visible to the query
// (AttendGroup's rule) whose rows are contiguous (runs break at n_home).
// Decode sees one or two runs (the filled slots); a prefill chunk splits
// them where its later tokens sit, and a window where its oldest tokens
// are still cached.
template <typename Fn>
void ForEachVisibleRun(const KvSlots& kv, int32_t query_pos, int32_t window, Fn fn) {
  // The oldest visible position, never below 0, so that empty slots (pos <
  // 0) fall outside too; 64-bit so that query_pos - window cannot wrap.
  const int64_t oldest = window > 0 ? std::max<int64_t>(0, int64_t{query_pos} - window + 1) : 0;
  auto visible = [&](int32_t s) { return kv.pos[s] >= oldest && kv.pos[s] <= query_pos; };
  int32_t s = 0;
  while (s < kv.n_slots) {
    while (s < kv.n_slots && !visible(s)) ++s;
    const int32_t begin = s;
    const int32_t limit = begin < kv.n_home ? std::min(kv.n_slots, kv.n_home) : kv.n_slots;
    while (s < limit && visible(s)) ++s;
    if (begin < s) fn(begin, s);
  }
}

}  // namespace

void AttendGroup(const float* q, int32_t n_group, const KvSlots& kv, int32_t query_pos,
                 int32_t window, float scale, const GroupAttentionOutputs& o) {
  H2O_CHECK(window >= 0);
  const KernelTable& kt = ActiveKernels();
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
