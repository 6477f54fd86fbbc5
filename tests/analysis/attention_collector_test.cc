// AttentionCollector and SummarizeLayer on hand-fed attention rows.
#include "analysis/attention_collector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "analysis/attention_analysis.h"

namespace h2o {
namespace {

// Feeds the lower-triangular matrix rows[q] (q + 1 entries each) to
// (layer, head), with the keys in slots of reversed order plus one empty
// slot, as a cache that reuses slots could hold them.
void FeedRows(AttentionCollector& c, int32_t layer, int32_t head,
              const std::vector<std::vector<float>>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size());
  std::vector<int32_t> pos(n + 1);
  for (int32_t s = 0; s < n; ++s) pos[s] = n - 1 - s;
  pos[n] = -1;
  for (int32_t q = 0; q < n; ++q) {
    std::vector<float> probs(n + 1, 0.0f);
    // Masked slots (after the query, or empty) get garbage to be ignored.
    for (int32_t s = 0; s < n; ++s) probs[s] = pos[s] <= q ? rows[q][pos[s]] : 0.25f;
    probs[n] = 0.5f;
    c.OnAttention(layer, head, q, pos, probs);
  }
}

TEST(AttentionCollector, SparsityAndAccumulatedAttentionOfHandRows) {
  AttentionCollector c(/*n_layer=*/2, /*n_head=*/1, /*n_positions=*/3, 0.01);
  // Row fractions: 0/1, 1/2 (0.001 < 0.01 * 0.999), 2/3 (both 0.005 < 0.0099).
  FeedRows(c, 1, 0, {{1.0f}, {0.999f, 0.001f}, {0.99f, 0.005f, 0.005f}});
  EXPECT_EQ(c.rows(1, 0), 3);
  EXPECT_EQ(c.rows(0, 0), 0);
  EXPECT_NEAR(c.sparsity(1, 0), (0.0 + 0.5 + 2.0 / 3.0) / 3.0, 1e-12);
  const auto acc = c.accumulated(1, 0);
  EXPECT_NEAR(acc[0], 1.0 + 0.999 + 0.99, 1e-6);
  EXPECT_NEAR(acc[1], 0.001 + 0.005, 1e-6);
  EXPECT_NEAR(acc[2], 0.005, 1e-6);
  EXPECT_EQ(c.accumulated(0, 0)[0], 0.0);
}

TEST(AttentionCollector, HeadsOnSeparateThreadsDoNotInterfere) {
  // Each thread feeds its own head; the totals must come out exactly as if
  // fed one after another (every head's additions stay in order).
  constexpr int32_t kHeads = 8, kPositions = 64;
  AttentionCollector c(1, kHeads, kPositions, 0.01);
  std::vector<std::thread> threads;
  for (int32_t h = 0; h < kHeads; ++h) {
    threads.emplace_back([&c, h] {
      std::vector<int32_t> pos(kPositions);
      for (int32_t s = 0; s < kPositions; ++s) pos[s] = s;
      for (int32_t q = 0; q < kPositions; ++q) {
        std::vector<float> probs(kPositions, 0.0f);
        for (int32_t s = 0; s <= q; ++s) probs[s] = 1.0f / static_cast<float>(q + 1);
        probs[0] += static_cast<float>(h);  // makes each head's sums distinct
        c.OnAttention(0, h, q, pos, probs);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int32_t h = 0; h < kHeads; ++h) {
    EXPECT_EQ(c.rows(0, h), kPositions);
    double expected0 = 0.0;
    for (int32_t q = 0; q < kPositions; ++q) expected0 += 1.0 / (q + 1) + h;
    EXPECT_NEAR(c.accumulated(0, h)[0], expected0, 1e-4) << "head " << h;
    EXPECT_NEAR(c.accumulated(0, h)[kPositions - 1], 1.0 / kPositions, 1e-7) << "head " << h;
  }
}

TEST(SummarizeLayer, OverlapRanksAndSparsityOfAHandBuiltLayer) {
  // One KV head with two query heads over 4 positions.
  AttentionCollector c(1, 2, 4, 0.01);
  // Head 0 accumulates [2.0, 0.6, 0.9, 0.5]; head 1 [1.0, 1.3, 1.2, 0.5].
  FeedRows(c, 0, 0, {{1.0f}, {0.4f, 0.6f}, {0.3f, 0.0f, 0.7f}, {0.3f, 0.0f, 0.2f, 0.5f}});
  FeedRows(c, 0, 1, {{1.0f}, {0.0f, 1.0f}, {0.0f, 0.1f, 0.9f}, {0.0f, 0.2f, 0.3f, 0.5f}});
  // Group scores [3.0, 1.9, 2.1, 1.0]: global top-2 = {0, 2}.
  const LayerAnalysis local_hit = SummarizeLayer(c, 0, {{0, 2}}, 2, 1.0);
  EXPECT_DOUBLE_EQ(local_hit.overlap, 1.0);
  const LayerAnalysis local_half = SummarizeLayer(c, 0, {{1, 2}}, 2, 1.0);
  EXPECT_DOUBLE_EQ(local_half.overlap, 0.5);
  ASSERT_EQ(local_half.kv_head_overlap.size(), 1u);

  // Rank curve: mean over heads of sorted [2.0, 0.9, 0.6, 0.5] and
  // [1.3, 1.2, 1.0, 0.5].
  ASSERT_EQ(local_half.rank_scores.size(), 4u);
  const double expected[4] = {1.65, 1.05, 0.8, 0.5};
  for (int r = 0; r < 4; ++r) EXPECT_NEAR(local_half.rank_scores[r], expected[r], 1e-6);
  EXPECT_EQ(local_half.fit.n_points, 4);
  EXPECT_GT(local_half.fit.alpha, 0.0);
  ASSERT_EQ(local_half.head_fits.size(), 2u);
  // The head of the ranks only: ranks 1..ceil(0.4 * 4) = 2.
  const LayerAnalysis head = SummarizeLayer(c, 0, {{1, 2}}, 2, 0.4);
  EXPECT_EQ(head.fit.n_points, 2);
  EXPECT_NEAR(head.fit.alpha, std::log(1.65 / 1.05) / std::log(2.0), 1e-6);
  EXPECT_EQ(head.head_fits[0].n_points, 2);

  // Sparse entries (< 1% of the row max): head 0 rows 2 and 3 each have
  // one zero (1/3, 1/4); head 1 rows 1, 2, 3 have one (1/2, 1/3, 1/4).
  ASSERT_EQ(local_half.head_sparsity.size(), 2u);
  EXPECT_NEAR(local_half.head_sparsity[0], (1.0 / 3 + 1.0 / 4) / 4, 1e-12);
  EXPECT_NEAR(local_half.head_sparsity[1], (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 4, 1e-12);
  EXPECT_NEAR(local_half.sparsity, (local_half.head_sparsity[0] + local_half.head_sparsity[1]) / 2,
              1e-12);
}

TEST(SummarizeLayer, EachKvHeadComparesWithItsOwnQueryHeads) {
  // Two KV heads of one query head each: head 0 favours position 0, head 1
  // position 2 (3 positions, one row each, at the last query).
  AttentionCollector c(1, 2, 3, 0.01);
  const std::vector<int32_t> pos = {0, 1, 2};
  c.OnAttention(0, 0, 2, pos, std::vector<float>{0.8f, 0.1f, 0.1f});
  c.OnAttention(0, 1, 2, pos, std::vector<float>{0.1f, 0.1f, 0.8f});
  const LayerAnalysis a = SummarizeLayer(c, 0, {{0}, {0}}, 1, 1.0);
  ASSERT_EQ(a.kv_head_overlap.size(), 2u);
  EXPECT_DOUBLE_EQ(a.kv_head_overlap[0], 1.0);
  EXPECT_DOUBLE_EQ(a.kv_head_overlap[1], 0.0);
  EXPECT_DOUBLE_EQ(a.overlap, 0.5);
}

}  // namespace
}  // namespace h2o
