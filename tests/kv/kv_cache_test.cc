// KvCache mechanics: storage round trip, slot reuse in place, accounting.
#include "kv/kv_cache.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/fp16.h"

namespace h2o {
namespace {

// Evicts the lowest position: enough to exercise the cache's mechanics.
class OldestFirst final : public EvictionPolicy {
 public:
  explicit OldestFirst(int32_t budget) : budget_(budget) {}
  std::string name() const override { return "oldest"; }
  bool needs_scores() const override { return true; }
  int32_t budget() const override { return budget_; }
  int32_t ChooseVictim(const HeadMetadata& m) override {
    int32_t best = -1;
    for (int32_t s = 0; s < m.n_slots; ++s) {
      if (m.pos[s] >= 0 && (best < 0 || m.pos[s] < m.pos[best])) best = s;
    }
    return best;
  }

 private:
  int32_t budget_;
};

KvCacheConfig SmallConfig(TensorType type, int32_t budget, int32_t capacity) {
  return {.n_layer = 2, .n_head_kv = 3, .head_dim = 4, .budget = budget, .capacity = capacity,
          .type = type};
}

std::vector<float> Row(int32_t pos, int32_t head, float sign) {
  return {sign * (pos + 0.25f), sign * head, sign * 1.5f, sign * (pos * 0.125f)};
}

float Element(const KvHeadView& v, const void* base, int32_t slot, int32_t i) {
  const int64_t idx = static_cast<int64_t>(slot) * v.head_dim + i;
  if (v.k_type == TensorType::kF32) return static_cast<const float*>(base)[idx];
  return kernels::F16ToF32(static_cast<const uint16_t*>(base)[idx]);
}

TEST(KvCache, StoresRowsPerLayerAndHead) {
  for (TensorType type : {TensorType::kF32, TensorType::kF16}) {
    KvCache cache(SmallConfig(type, 8, 8), std::make_unique<FullPolicy>(8));
    for (int32_t pos = 0; pos < 5; ++pos) {
      for (int32_t l = 0; l < 2; ++l) {
        for (int32_t h = 0; h < 3; ++h) {
          const auto k = Row(pos + 10 * l, h, 1.0f);
          const auto v = Row(pos + 10 * l, h, -1.0f);
          EXPECT_EQ(cache.Append(l, h, pos, k.data(), v.data()), pos);
        }
      }
    }
    for (int32_t l = 0; l < 2; ++l) {
      for (int32_t h = 0; h < 3; ++h) {
        const KvHeadView view = cache.View(l, h);
        ASSERT_EQ(view.n_slots, 5);
        EXPECT_EQ(cache.count(l, h), 5);
        for (int32_t s = 0; s < 5; ++s) {
          EXPECT_EQ(view.pos[s], s);
          const auto k = Row(s + 10 * l, h, 1.0f);
          for (int i = 0; i < 4; ++i) {
            // These values are exact in f16 too (few significant bits).
            EXPECT_EQ(Element(view, view.k, s, i), k[i]);
            EXPECT_EQ(Element(view, view.v, s, i), -k[i]);
          }
        }
      }
    }
  }
}

TEST(KvCache, EvictedSlotIsReusedInPlaceAndMemoryStaysFixed) {
  KvCache cache(SmallConfig(TensorType::kF32, 3, 4), std::make_unique<OldestFirst>(3));
  const size_t bytes = cache.AllocatedBytes();
  for (int32_t pos = 0; pos < 20; ++pos) {
    for (int32_t l = 0; l < 2; ++l) {
      for (int32_t h = 0; h < 3; ++h) {
        const auto k = Row(pos, h, 1.0f);
        const int32_t slot = cache.Append(l, h, pos, k.data(), k.data());
        // Slots fill 0..3 once; after that each token lands in the slot just
        // freed, which held pos - 4 (evicted when pos - 1 arrived).
        EXPECT_EQ(slot, pos % 4);
      }
      cache.EvictOverBudget(l);
      for (int32_t h = 0; h < 3; ++h) {
        EXPECT_EQ(cache.count(l, h), std::min(pos + 1, 3));
        const KvHeadView view = cache.View(l, h);
        EXPECT_LE(view.n_slots, 4);
        std::vector<int32_t> kept;
        for (int32_t s = 0; s < view.n_slots; ++s) {
          if (view.pos[s] >= 0) kept.push_back(view.pos[s]);
        }
        std::sort(kept.begin(), kept.end());
        std::vector<int32_t> expected;
        for (int32_t p = std::max(0, pos - 2); p <= pos; ++p) expected.push_back(p);
        EXPECT_EQ(kept, expected);
      }
    }
  }
  EXPECT_EQ(cache.AllocatedBytes(), bytes);
}

TEST(KvCache, NewTokensStartWithZeroScore) {
  KvCache cache(SmallConfig(TensorType::kF32, 1, 2), std::make_unique<OldestFirst>(1));
  const auto k = Row(0, 0, 1.0f);
  const int32_t s0 = cache.Append(0, 0, 0, k.data(), k.data());
  cache.scores(0, 0)[s0] = 5.0;
  cache.Append(0, 0, 1, k.data(), k.data());
  cache.EvictOverBudget(0);  // evicts position 0
  const int32_t s2 = cache.Append(0, 0, 2, k.data(), k.data());
  EXPECT_EQ(s2, s0);
  EXPECT_EQ(cache.scores(0, 0)[s2], 0.0);
}

TEST(KvCache, FullCacheBytesFormula) {
  // 2 (K and V) * layers * kv heads * tokens * head_dim * element size.
  EXPECT_EQ(KvCache::FullCacheBytes(5, 4, 8, TensorType::kF16, 512), 2u * 5 * 4 * 512 * 8 * 2);
  EXPECT_EQ(KvCache::FullCacheBytes(22, 4, 64, TensorType::kF32, 4096), 2u * 22 * 4 * 4096 * 64 * 4);
}

TEST(KvCache, ClearForgetsTokens) {
  KvCache cache(SmallConfig(TensorType::kF16, 4, 4), std::make_unique<FullPolicy>(4));
  const auto k = Row(0, 0, 1.0f);
  cache.Append(1, 2, 0, k.data(), k.data());
  cache.Clear();
  EXPECT_EQ(cache.count(1, 2), 0);
  EXPECT_EQ(cache.View(1, 2).n_slots, 0);
  EXPECT_EQ(cache.Append(1, 2, 0, k.data(), k.data()), 0);
}

}  // namespace
}  // namespace h2o
