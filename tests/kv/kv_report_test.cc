// The KV memory wording: unchanged for a model without windows, both layer
// kinds named with their token counts for one with them.
#include "kv/kv_report.h"

#include <gtest/gtest.h>

#include "kv/policies.h"

namespace h2o {
namespace {

KvCacheConfig Config(int32_t n_layer, int32_t budget, int32_t capacity) {
  KvCacheConfig c;
  c.n_layer = n_layer;
  c.n_head_kv = 1;
  c.head_dim = 8;
  c.budget = budget;
  c.capacity = capacity;
  return c;
}

// Gemma 3's pattern: five sliding-window layers, then a global one.
std::vector<int32_t> GemmaWindows(int32_t n_layer, int32_t window) {
  std::vector<int32_t> w(n_layer, window);
  for (int32_t l = 5; l < n_layer; l += 6) w[l] = 0;
  return w;
}

TEST(KvReport, WithoutWindowsTheWordsAreAsBefore) {
  EXPECT_EQ(DescribeKvSlots(Config(5, 16, 17)),
            "16 tokens per layer and KV head, 1 more shared by the layers for a chunk");
  EXPECT_EQ(DescribeKvSlots(Config(5, 2048, 2048)), "2048 tokens per layer and KV head");
  EXPECT_EQ(DescribeFullKv(Config(5, 16, 17), 512), "");
  KvCacheConfig zeros = Config(2, 16, 16);
  zeros.layer_window = {0, 0};
  EXPECT_EQ(DescribeKvSlots(zeros), "16 tokens per layer and KV head");
}

TEST(KvReport, WindowsNameBothKindsOfLayer) {
  KvCacheConfig c = Config(24, 16, 80);
  c.layer_window = GemmaWindows(24, 512);
  c.window_chunk = 64;
  EXPECT_EQ(DescribeKvSlots(c),
            "16 tokens per KV head in each of 4 global layers and 512 in each of 20 "
            "sliding-window layers, 64 more shared by the layers for a chunk");
  EXPECT_EQ(DescribeFullKv(c, 4096),
            "an exact cache: 4096 tokens per KV head in each of 4 global layers and 512 in each "
            "of 20 sliding-window layers");
  // Fewer tokens than the window: the window holds them all.
  EXPECT_EQ(DescribeFullKv(c, 100),
            "an exact cache: 100 tokens per KV head in each of 4 global layers and 100 in each "
            "of 20 sliding-window layers");
}

TEST(KvReport, OneLayerAndSeveralWindowSizes) {
  KvCacheConfig c = Config(4, 8, 8);
  c.layer_window = {32, 0, 16, 32};
  EXPECT_EQ(DescribeKvSlots(c),
            "8 tokens per KV head in each of 1 global layer, 16 in each of 1 and 32 in each of "
            "2 sliding-window layers");
  c.layer_window = {32, 16, 16, 32};
  c.window_chunk = 1;
  EXPECT_EQ(DescribeKvSlots(c),
            "16 tokens per KV head in each of 2 and 32 in each of 2 sliding-window layers, 1 more "
            "shared by the layers for a chunk");
  EXPECT_EQ(DescribeFullKv(c, 20),
            "an exact cache: 16 tokens per KV head in each of 2 and 20 in each of 2 "
            "sliding-window layers");
}

// The full cache is counted by the same function as the cache itself: a
// full policy sized for its tokens is exactly it, rows and bookkeeping.
TEST(KvReport, FullKvMemoryIsAFullPolicyOfTheSameTokens) {
  KvCacheConfig c = Config(3, 10, 10);
  c.layer_window = {4, 0, 4};
  const KvMemory full = FullKvMemory(Config(3, 16, 17), 10);
  const KvMemory own = KvMemoryFor(Config(3, 10, 10), FullPolicy(10));
  EXPECT_EQ(full.rows, own.rows);
  EXPECT_EQ(full.bookkeeping, own.bookkeeping);
  EXPECT_FALSE(full.scores);
  // With windows: a sliding-window layer at min(n_tokens, W); its rows are
  // KvCache::FullCacheBytes.
  EXPECT_EQ(FullKvMemory(c, 10).rows,
            KvCache::FullCacheBytes(3, 1, 8, {TensorType::kF16, TensorType::kF16}, 10, c.layer_window));
  EXPECT_EQ(FullKvMemory(c, 0).total(), 0u);
}

TEST(KvReport, WhyOverFullNamesTheBudgetAgainstTheTokens) {
  const KvCacheConfig c = Config(5, 16, 17);
  const KvMemory cache = KvMemoryFor(c, H2oPolicy(8, 8));
  EXPECT_EQ(WhyOverFull(c, 3, cache, FullKvMemory(c, 3)),
            "budget 16 > 3 tokens: a full cache of the same tokens is smaller");
  EXPECT_EQ(WhyOverFull(c, 512, cache, FullKvMemory(c, 512)), "");
  EXPECT_EQ(FormatKvMemory({1024, 512, true}), "1.50 KiB (1.00 KiB K/V + 512 B positions, scores)");
}

}  // namespace
}  // namespace h2o
