#include "kernels/attention_chunk.h"

#include <algorithm>
#include <array>
#include <limits>

#include "core/status.h"
#include "kernels/attention_runs.h"
#include "kernels/dispatch.h"
#include "kernels/flush_denormals.h"

namespace h2o::kernels {
namespace {

// A block holds about this many (query, head) rows: the row kernels reuse
// each K/V row, once widened, across all of them, and past a few dozen the
// saving per row flattens while the probability tile keeps growing.
constexpr int64_t kBlockRows = 64;
constexpr int32_t kMaxBlockQueries = 32;
// The probability tile stays within L2 next to the K/V rows (512 KiB).
constexpr int64_t kMaxTileFloats = int64_t{1} << 17;
// Each block's softmax runs over its slots from a multiple of this, so
// every backend's softmax sums each slot in the same vector lane, hence in
// the same order, as over AttendGroup's full row (the slots left out hold
// exact zeros, which change no sum). 64 covers 8- and 16-lane sums with
// any unrolling up to four registers.
constexpr int32_t kSoftmaxAlign = 64;

// Queries per block as the row target allows, at least one.
int64_t BlockQueriesByRows(int32_t n_queries, int32_t n_group) {
  return std::max<int64_t>(1,
                           std::min<int64_t>({kBlockRows / n_group, kMaxBlockQueries, n_queries}));
}

// ... and as the probability tile allows, still at least one.
int32_t BlockQueries(int32_t n_queries, int32_t n_group, int32_t n_slots) {
  const int64_t by_tile = kMaxTileFloats / (int64_t{n_group} * std::max(n_slots, 1));
  return static_cast<int32_t>(
      std::max<int64_t>(1, std::min(BlockQueriesByRows(n_queries, n_group), by_tile)));
}

// One block of queries [t0, t1) and the scratch it works in.
struct Block {
  const KernelTable& kt;
  const KvSlots& kv;
  int32_t n_group, pos0, window, t0, t1;
  float* q;      // [rows][head_dim]: row (t - t0) * n_group + h is query t's head h
  float* out;    // [rows][head_dim]
  float* probs;  // [rows][width]: column j is slot first_slot + j
  int32_t first_slot = 0, width = 0;

  int32_t rows() const { return (t1 - t0) * n_group; }
  float* ProbsAt(int32_t row, int32_t slot) const {
    return probs + static_cast<size_t>(row) * width + (slot - first_slot);
  }
  // The slots some query of the block sees, in runs of contiguous rows.
  template <typename Fn>
  void ForEachRun(Fn fn) const {
    ForEachRunInPositions(kv, OldestVisible(int64_t{pos0} + t0, window), int64_t{pos0} + t1 - 1,
                          fn);
  }
};

void GatherQueries(const Block& b, const float* q, int64_t q_stride) {
  const size_t group_floats = static_cast<size_t>(b.n_group) * b.kv.head_dim;
  for (int32_t t = b.t0; t < b.t1; ++t) {
    const float* src = q + t * q_stride;
    std::copy(src, src + group_floats, b.q + (t - b.t0) * group_floats);
  }
}

// Logits of every row against the block's slots; -inf (probability
// exactly 0) where a query does not see a slot: before its position, past
// its window, or between the block's runs.
void ScoreBlock(const Block& b, float scale) {
  std::fill(b.probs, b.probs + static_cast<size_t>(b.rows()) * b.width,
            -std::numeric_limits<float>::infinity());
  const ScoreRowsFn score_rows = b.kt.KvFor(b.kv.k_type).score_rows;
  b.ForEachRun([&](int32_t begin, int32_t end) {
    score_rows(b.q, b.rows(), b.kv.KRow(begin), end - begin, b.kv.head_dim, scale,
               b.ProbsAt(0, begin), b.width);
  });
  // sees[t - t0] counts the slots query t sees, as a difference array.
  std::array<int32_t, kMaxBlockQueries + 1> sees{};
  b.ForEachRun([&](int32_t begin, int32_t end) {
    for (int32_t s = begin; s < end; ++s) {
      const int64_t p = b.kv.pos[s];
      // Queries [first, last) of the block see slot s.
      const int64_t first = std::clamp<int64_t>(p - b.pos0, b.t0, b.t1);
      const int64_t last =
          b.window > 0 ? std::clamp<int64_t>(p + b.window - b.pos0, first, b.t1) : b.t1;
      ++sees[first - b.t0];
      --sees[last - b.t0];
      auto hide = [&](int64_t from, int64_t to) {
        for (int64_t i = (from - b.t0) * b.n_group; i < (to - b.t0) * b.n_group; ++i) {
          *b.ProbsAt(static_cast<int32_t>(i), s) = -std::numeric_limits<float>::infinity();
        }
      };
      hide(b.t0, first);
      hide(last, b.t1);
    }
  });
  // A query seeing nothing would get NaN probabilities: a cache that lost
  // its own token, caught here rather than as NaN logits.
  int32_t seen = 0;
  for (int32_t i = 0; i < b.t1 - b.t0; ++i) H2O_CHECK((seen += sees[i]) > 0);
}

void WeighValues(const Block& b) {
  const int32_t d = b.kv.head_dim;
  std::fill(b.out, b.out + static_cast<size_t>(b.rows()) * d, 0.0f);
  const WeightedSumRowsFn weighted_sum_rows = b.kt.KvFor(b.kv.v_type).weighted_sum_rows;
  b.ForEachRun([&](int32_t begin, int32_t end) {
    weighted_sum_rows(b.ProbsAt(0, begin), b.width, b.rows(), b.kv.VRow(begin), end - begin, d,
                      b.out);
  });
}

// AttendGroup's update, query after query: each slot gets each query's
// probabilities summed over the group in head order (slots a query does
// not see add an exact 0). The sums are formed in the group's first row of
// probabilities, so this is the block's last use of them.
void AccumulateScores(const Block& b, double* score_accum, float* step_attention) {
  b.ForEachRun([&](int32_t begin, int32_t end) {
    const int32_t n = end - begin;
    for (int32_t t = b.t0; t < b.t1; ++t) {
      const int32_t row0 = (t - b.t0) * b.n_group;
      // 0.0f + p is p for the probabilities (never -0), so the first head
      // starts the sum as AttendGroup's loop does.
      float* group_sum = b.ProbsAt(row0, begin);
      for (int32_t h = 1; h < b.n_group; ++h) {
        const float* p = b.ProbsAt(row0 + h, begin);
        for (int32_t i = 0; i < n; ++i) group_sum[i] += p[i];
      }
      float* step = step_attention != nullptr && t == b.t1 - 1 ? step_attention + begin : nullptr;
      AddGroupSums(group_sum, n, score_accum != nullptr ? score_accum + begin : nullptr, step);
    }
  });
}

}  // namespace

size_t AttendGroupChunkScratchFloats(int32_t max_queries, int32_t n_group, int32_t max_slots,
                                     int32_t head_dim) {
  // A call's block has at most `rows` rows (fewer queries or the tile
  // limit only lower it), and rows * n_slots probabilities, which the tile
  // limit keeps within kMaxTileFloats unless one query's group alone is
  // more.
  const size_t rows = static_cast<size_t>(BlockQueriesByRows(max_queries, n_group)) * n_group;
  const size_t slots = static_cast<size_t>(std::max(max_slots, 1));
  const size_t probs = std::min(
      rows * slots, std::max(static_cast<size_t>(kMaxTileFloats), size_t{1} * n_group * slots));
  return rows * 2 * static_cast<size_t>(head_dim) + probs;
}

void AttendGroupChunk(const float* q, int64_t q_stride, int32_t n_queries, int32_t n_group,
                      const KvSlots& kv, int32_t pos0, int32_t window, float scale,
                      const ChunkAttentionOutputs& outputs) {
  AttendGroupChunk(ActiveKernels(), q, q_stride, n_queries, n_group, kv, pos0, window, scale,
                   outputs);
}

void AttendGroupChunk(const KernelTable& kt, const float* q, int64_t q_stride, int32_t n_queries,
                      int32_t n_group, const KvSlots& kv, int32_t pos0, int32_t window, float scale,
                      const ChunkAttentionOutputs& o) {
  H2O_CHECK(n_queries >= 1 && n_group >= 1 && window >= 0);
  const ScopedFlushDenormals flush;
  const int32_t d = kv.head_dim;
  const int32_t bq = BlockQueries(n_queries, n_group, kv.n_slots);
  const size_t max_rows = static_cast<size_t>(bq) * n_group;
  for (int32_t t0 = 0; t0 < n_queries; t0 += bq) {
    Block b{.kt = kt,
            .kv = kv,
            .n_group = n_group,
            .pos0 = pos0,
            .window = window,
            .t0 = t0,
            .t1 = std::min(n_queries, t0 + bq),
            .q = o.scratch,
            .out = o.scratch + max_rows * d,
            .probs = o.scratch + 2 * max_rows * d};
    int32_t end_slot = 0;
    b.first_slot = kv.n_slots;
    b.ForEachRun([&](int32_t begin, int32_t end) {
      b.first_slot = std::min(b.first_slot, begin);
      end_slot = end;
    });
    // No slot for any query: ScoreBlock's check fails below.
    if (end_slot == 0) b.first_slot = 0;
    b.first_slot -= b.first_slot % kSoftmaxAlign;
    b.width = end_slot - b.first_slot;

    GatherQueries(b, q, q_stride);
    ScoreBlock(b, scale);
    for (int32_t r = 0; r < b.rows(); ++r) kt.softmax(b.ProbsAt(r, b.first_slot), b.width);
    WeighValues(b);
    const size_t group_floats = static_cast<size_t>(n_group) * d;
    for (int32_t t = b.t0; t < b.t1; ++t) {
      const float* src = b.out + (t - b.t0) * group_floats;
      std::copy(src, src + group_floats, o.out + t * o.out_stride);
    }
    if (o.score_accum != nullptr || (o.step_attention != nullptr && b.t1 == n_queries)) {
      AccumulateScores(b, o.score_accum, b.t1 == n_queries ? o.step_attention : nullptr);
    }
  }
}

}  // namespace h2o::kernels
