#include "kernels/attention.h"

#include <algorithm>
#include <limits>

#include "core/status.h"
#include "kernels/attention_runs.h"
#include "kernels/dispatch.h"
#include "kernels/flush_denormals.h"
#include "kernels/prefetch.h"

namespace h2o::kernels {
namespace {

// The runs of slots visible to a query at query_pos (AttendGroup's rule).
template <typename Fn>
void ForEachVisibleRun(const KvSlots& kv, int32_t query_pos, int32_t window, Fn fn) {
  ForEachRunInPositions(kv, OldestVisible(query_pos, window), query_pos, fn);
}

// The visible runs, found by one scan of the positions for AttendGroup's
// three passes over them. Decode sees one or two runs; should a call see
// more than kMax (a window over scattered slots), each pass scans again.
class VisibleRuns {
 public:
  VisibleRuns(const KvSlots& kv, int32_t query_pos, int32_t window)
      : kv_(kv), query_pos_(query_pos), window_(window) {
    ForEachVisibleRun(kv, query_pos, window, [&](int32_t begin, int32_t end) {
      if (n_ < kMax) runs_[n_] = {begin, end};
      ++n_;
    });
  }
  bool empty() const { return n_ == 0; }
  int32_t first_begin() const { return runs_[0].begin; }
  int32_t first_end() const { return runs_[0].end; }
  template <typename Fn>
  void ForEach(Fn fn) const {
    if (n_ > kMax) {
      ForEachVisibleRun(kv_, query_pos_, window_, fn);
      return;
    }
    for (int32_t i = 0; i < n_; ++i) fn(runs_[i].begin, runs_[i].end);
  }

 private:
  static constexpr int32_t kMax = 8;
  struct Run {
    int32_t begin, end;
  };
  const KvSlots& kv_;
  int32_t query_pos_, window_;
  Run runs_[kMax];
  int32_t n_ = 0;
};

// score_accum[s] (and step[s]) += the group's probabilities of slot s,
// summed in float from 0 in head order, for s in [begin, end). Blocks of
// slots keep the sums in a buffer so that every loop runs over
// consecutive slots, which the compiler vectorizes; each slot's sum is
// the same one in the same order.
void AddGroupProbabilities(const float* probs, int32_t n, int32_t n_group, int32_t begin,
                           int32_t end, double* score_accum, float* step) {
  constexpr int32_t kBlock = 64;
  float sum[kBlock];
  for (int32_t first = begin; first < end; first += kBlock) {
    const int32_t m = std::min(kBlock, end - first);
    std::fill_n(sum, m, 0.0f);
    for (int32_t h = 0; h < n_group; ++h) {
      const float* p = probs + static_cast<size_t>(h) * n + first;
      for (int32_t i = 0; i < m; ++i) sum[i] += p[i];
    }
    AddGroupSums(sum, m, score_accum != nullptr ? score_accum + first : nullptr,
                 step != nullptr ? step + first : nullptr);
  }
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
  const VisibleRuns runs(kv, query_pos, window);
  // All -inf would be NaN probabilities: a cache that lost the query's own
  // token, caught here rather than as NaN logits.
  H2O_CHECK(!runs.empty());
  // The row kernels hint rows kKvRowPrefetchBytes ahead of the one they
  // read, so without this the first of them would be waited for, and in a
  // short cache (a batch of sequences at depth 40: 5 KiB of f16 K per head)
  // they are a good part of the head. V's are hinted here too, to arrive
  // while the scores are computed.
  {
    const int64_t run_rows = runs.first_end() - runs.first_begin();
    PrefetchAhead(kv.KRow(runs.first_begin()),
                  std::min<int64_t>(run_rows * RowBytes(kv.k_type, d), kKvRowPrefetchBytes), 0);
    PrefetchAhead(kv.VRow(runs.first_begin()),
                  std::min<int64_t>(run_rows * RowBytes(kv.v_type, d), kKvRowPrefetchBytes), 0);
  }
  runs.ForEach([&](int32_t begin, int32_t end) {
    score_rows(q, n_group, kv.KRow(begin), end - begin, d, scale, o.probs + begin, n);
  });
  for (int32_t h = 0; h < n_group; ++h) {
    kt.softmax(o.probs + static_cast<size_t>(h) * n, n);
    std::fill(o.out + static_cast<size_t>(h) * d, o.out + static_cast<size_t>(h + 1) * d, 0.0f);
  }
  runs.ForEach([&](int32_t begin, int32_t end) {
    weighted_sum_rows(o.probs + begin, n, n_group, kv.VRow(begin), end - begin, d, o.out);
  });
  if (o.score_accum == nullptr && o.step_attention == nullptr) return;
  // The scores from the same probabilities, summed over the group.
  runs.ForEach([&](int32_t begin, int32_t end) {
    AddGroupProbabilities(o.probs, n, n_group, begin, end, o.score_accum, o.step_attention);
  });
}

}  // namespace h2o::kernels
