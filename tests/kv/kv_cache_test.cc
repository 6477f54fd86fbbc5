// KvCache mechanics: storage round trip, slot reuse in place, accounting.
#include "kv/kv_cache.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "kv/policies.h"

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
  KvCacheConfig c;
  c.n_layer = 2;
  c.n_head_kv = 3;
  c.head_dim = 4;
  c.budget = budget;
  c.capacity = capacity;
  c.types = {type, type};
  return c;
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

// The slot of `pos` in (l, h), or -1.
int32_t SlotOf(const KvCache& cache, int32_t l, int32_t h, int32_t pos) {
  const KvHeadView view = cache.View(l, h);
  for (int32_t s = 0; s < view.n_slots; ++s) {
    if (view.pos[s] == pos) return s;
  }
  return -1;
}

TEST(KvCache, EvictedSlotIsReusedAndMemoryStaysFixed) {
  KvCache cache(SmallConfig(TensorType::kF32, 3, 4), std::make_unique<OldestFirst>(3));
  const size_t bytes = cache.AllocatedBytes();
  for (int32_t pos = 0; pos < 20; ++pos) {
    for (int32_t l = 0; l < 2; ++l) {
      for (int32_t h = 0; h < 3; ++h) {
        const auto k = Row(pos, h, 1.0f);
        const auto v = Row(pos, h, -1.0f);
        const int32_t slot = cache.Append(l, h, pos, k.data(), v.data());
        // Slots 0..2 fill once; after that the new token spills to slot 3.
        EXPECT_EQ(slot, std::min(pos, 3));
      }
      cache.EvictOverBudget(l);
      for (int32_t h = 0; h < 3; ++h) {
        EXPECT_EQ(cache.count(l, h), std::min(pos + 1, 3));
        const KvHeadView view = cache.View(l, h);
        EXPECT_LE(view.n_slots, 3);  // nothing left in the spill
        std::vector<int32_t> kept;
        for (int32_t s = 0; s < view.n_slots; ++s) {
          if (view.pos[s] >= 0) kept.push_back(view.pos[s]);
        }
        std::sort(kept.begin(), kept.end());
        std::vector<int32_t> expected;
        for (int32_t p = std::max(0, pos - 2); p <= pos; ++p) expected.push_back(p);
        EXPECT_EQ(kept, expected);
        // The newest token took the slot its victim, pos - 3, freed, and
        // its rows came along.
        EXPECT_EQ(SlotOf(cache, l, h, pos), pos % 3);
        const auto k = Row(pos, h, 1.0f);
        for (int i = 0; i < 4; ++i) {
          EXPECT_EQ(static_cast<const float*>(view.KRow(pos % 3))[i], k[i]);
          EXPECT_EQ(static_cast<const float*>(view.VRow(pos % 3))[i], -k[i]);
        }
      }
    }
  }
  EXPECT_EQ(cache.AllocatedBytes(), bytes);
}

// Chunks of every size up to the spill, victims anywhere (a seeded random
// policy): after each eviction a head's written slots are exactly its
// tokens, with their own rows, so appends never need a free list.
TEST(KvCache, EvictionLeavesNoHoles) {
  constexpr int32_t kBudget = 5, kChunk = 4;
  KvCache cache(SmallConfig(TensorType::kF32, kBudget, kBudget + kChunk),
                std::make_unique<RandomPolicy>(3, 2, 7));
  std::mt19937 rng(11);
  int32_t next = 0;
  for (int step = 0; step < 40; ++step) {
    const int32_t n = 1 + static_cast<int32_t>(rng() % kChunk);
    for (int32_t l = 0; l < 2; ++l) {
      for (int32_t h = 0; h < 3; ++h) {
        for (int32_t pos = next; pos < next + n; ++pos) {
          const auto k = Row(pos, h, 1.0f);
          const auto v = Row(pos, h, -1.0f);
          cache.Append(l, h, pos, k.data(), v.data());
        }
      }
      cache.EvictOverBudget(l);
      for (int32_t h = 0; h < 3; ++h) {
        const KvHeadView view = cache.View(l, h);
        EXPECT_EQ(cache.count(l, h), std::min(next + n, kBudget));
        ASSERT_EQ(view.n_slots, cache.count(l, h));
        for (int32_t s = 0; s < view.n_slots; ++s) {
          ASSERT_GE(view.pos[s], 0) << "hole at slot " << s;
          const auto k = Row(view.pos[s], h, 1.0f);
          EXPECT_EQ(static_cast<const float*>(view.KRow(s))[0], k[0]);
          EXPECT_EQ(static_cast<const float*>(view.VRow(s))[3], -k[3]);
        }
      }
    }
    next += n;
  }
}

TEST(KvCache, SpillIsSharedByLayersAndCountedOnce) {
  // f32, head_dim 4: 16 B a row. K/V rows for budget 3 in each of 2 x 3
  // (layer, head) pairs + a 1-slot spill per head; metadata (position,
  // score) for all 4 slots of every pair; a freed-slot index (4 B) per
  // spill slot of each head.
  KvCache cache(SmallConfig(TensorType::kF32, 3, 4), std::make_unique<OldestFirst>(3));
  EXPECT_EQ(cache.AllocatedBytes(), 2 * 16 * (6 * 3 + 3 * 1) + 6 * 4 * (4 + 8) + 3 * 1 * 4);
  for (int32_t pos = 0; pos < 4; ++pos) {
    const auto k = Row(pos, 0, 1.0f);
    cache.Append(0, 0, pos, k.data(), k.data());
  }
  // Layer 0 has a token in the spill until it evicts: another layer may
  // not spill meanwhile.
  for (int32_t pos = 0; pos < 3; ++pos) {
    const auto k = Row(pos, 0, 1.0f);
    cache.Append(1, 0, pos, k.data(), k.data());
  }
  const auto k = Row(3, 0, 1.0f);
  EXPECT_DEATH(cache.Append(1, 0, 3, k.data(), k.data()),
               "internal check failed: claimed \\|\\| spilled == layer");
  cache.EvictOverBudget(0);
  EXPECT_EQ(cache.Append(1, 0, 3, k.data(), k.data()), 3);
}

TEST(KvCache, NewTokensStartWithZeroScoreAndScoresMoveWithTheirToken) {
  KvCache cache(SmallConfig(TensorType::kF32, 2, 3), std::make_unique<OldestFirst>(2));
  const auto k = Row(0, 0, 1.0f);
  const int32_t s0 = cache.Append(0, 0, 0, k.data(), k.data());
  const int32_t s1 = cache.Append(0, 0, 1, k.data(), k.data());
  cache.scores(0, 0)[s0] = 5.0;
  cache.scores(0, 0)[s1] = 7.0;
  const int32_t spilled = cache.Append(0, 0, 2, k.data(), k.data());
  EXPECT_EQ(spilled, 2);
  EXPECT_EQ(cache.scores(0, 0)[spilled], 0.0);
  cache.scores(0, 0)[spilled] = 2.5;
  cache.EvictOverBudget(0);  // evicts position 0; position 2 moves to its slot
  EXPECT_EQ(SlotOf(cache, 0, 0, 2), s0);
  EXPECT_EQ(cache.scores(0, 0)[s0], 2.5);
  EXPECT_EQ(cache.scores(0, 0)[s1], 7.0);
  // The next token lands where position 2 was spilled; that slot's score
  // starts again at 0.
  EXPECT_EQ(cache.Append(0, 0, 3, k.data(), k.data()), spilled);
  EXPECT_EQ(cache.scores(0, 0)[spilled], 0.0);
}

TEST(KvCache, FullCacheBytesFormula) {
  // 2 (K and V) * layers * kv heads * tokens * head_dim * element size.
  EXPECT_EQ(KvCache::FullCacheBytes(5, 4, 8, {TensorType::kF16, TensorType::kF16}, 512),
            2u * 5 * 4 * 512 * 8 * 2);
  EXPECT_EQ(KvCache::FullCacheBytes(22, 4, 64, {TensorType::kF32, TensorType::kF32}, 4096),
            2u * 22 * 4 * 4096 * 64 * 4);
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

// K and V rows of the quantized and 16-bit types, which may differ: stored
// as the type's own QuantizeRow gives them, kept byte for byte through
// eviction, the spill and CopyFrom, and counted at their own sizes.
constexpr int32_t kDim = 64;

std::vector<float> RowOf(int32_t layer, int32_t head, int32_t pos, int32_t which) {
  std::mt19937 rng(static_cast<uint32_t>(((layer * 7 + head) * 1000 + pos) * 2 + which));
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> row(kDim);
  for (float& x : row) x = u(rng);
  return row;
}

std::vector<uint8_t> Quantized(TensorType type, const std::vector<float>& row) {
  std::vector<uint8_t> bytes(RowBytes(type, kDim));
  kernels::QuantizeRow(type, row.data(), bytes.data(), kDim);
  return bytes;
}

// Every kept slot of every (layer, head) holds the quantized rows of its
// own position, byte for byte.
void ExpectRowsOfTheirPositions(const KvCache& cache, const KvTypes& types) {
  const KvCacheConfig& c = cache.config();
  for (int32_t l = 0; l < c.n_layer; ++l) {
    for (int32_t h = 0; h < c.n_head_kv; ++h) {
      const KvHeadView view = cache.View(l, h);
      EXPECT_EQ(view.k_type, types.k);
      EXPECT_EQ(view.v_type, types.v);
      for (int32_t s = 0; s < view.n_slots; ++s) {
        if (view.pos[s] < 0) continue;
        const auto k = Quantized(types.k, RowOf(l, h, view.pos[s], 0));
        const auto v = Quantized(types.v, RowOf(l, h, view.pos[s], 1));
        ASSERT_EQ(std::memcmp(view.KRow(s), k.data(), k.size()), 0)
            << "K of pos " << view.pos[s] << " layer " << l << " head " << h;
        ASSERT_EQ(std::memcmp(view.VRow(s), v.data(), v.size()), 0)
            << "V of pos " << view.pos[s] << " layer " << l << " head " << h;
      }
    }
  }
}

TEST(KvCache, KeepsQuantizedRowsThroughEvictionSpillAndCopy) {
  const KvTypes kTypes[] = {{TensorType::kQ8_0, TensorType::kQ4_1},
                            {TensorType::kQ4_0, TensorType::kQ8_0},
                            {TensorType::kQ5_0, TensorType::kQ5_1},
                            {TensorType::kBF16, TensorType::kF16}};
  for (const KvTypes& types : kTypes) {
    SCOPED_TRACE(types.Name());
    KvCacheConfig c;
    c.n_layer = 2;
    c.n_head_kv = 2;
    c.head_dim = kDim;
    c.budget = 3;
    c.capacity = 5;  // chunks of 2 spill
    c.types = types;
    KvCache cache(c, std::make_unique<OldestFirst>(3));
    // Rows per (layer, head): 3 own + 2 spill, K at its size plus V at its.
    EXPECT_EQ(KvCache::RowBytesFor(c),
              (2u * 2 * 3 + 2u * 2) * (RowBytes(types.k, kDim) + RowBytes(types.v, kDim)));
    KvCache copy(c, std::make_unique<OldestFirst>(3));
    for (int32_t pos = 0; pos < 12; pos += 2) {
      for (int32_t l = 0; l < 2; ++l) {
        for (int32_t h = 0; h < 2; ++h) {
          for (int32_t p = pos; p < pos + 2; ++p) {
            cache.Append(l, h, p, RowOf(l, h, p, 0).data(), RowOf(l, h, p, 1).data());
          }
        }
        cache.EvictOverBudget(l);
      }
      ExpectRowsOfTheirPositions(cache, types);
      copy.CopyFrom(cache);
      ExpectRowsOfTheirPositions(copy, types);
    }
  }
}

// Minor page faults this thread has taken so far.
long ThreadMinorFaults() {
  rusage usage{};
  EXPECT_EQ(getrusage(RUSAGE_THREAD, &usage), 0);
  return usage.ru_minflt;
}

// Appends n_tokens tokens to every head and returns the page faults taken.
long FaultsWhileAppending(KvCache& cache, int32_t n_tokens) {
  const KvCacheConfig& c = cache.config();
  const std::vector<float> row(static_cast<size_t>(c.head_dim), 0.5f);
  const long before = ThreadMinorFaults();
  for (int32_t pos = 0; pos < n_tokens; ++pos) {
    for (int32_t l = 0; l < c.n_layer; ++l) {
      for (int32_t h = 0; h < c.n_head_kv; ++h) cache.Append(l, h, pos, row.data(), row.data());
    }
  }
  return ThreadMinorFaults() - before;
}

TEST(KvCache, CommittedRowsTakeNoPageFaults) {
  // 64 MiB of K/V rows: mapped afresh by the allocator (above any mmap
  // threshold), so uncommitted rows fault in as they are first written.
  KvCacheConfig c;
  c.n_layer = 4;
  c.n_head_kv = 8;
  c.head_dim = 64;
  c.budget = c.capacity = 8192;
  c.types = {TensorType::kF16, TensorType::kF16};
  const int32_t n_tokens = 512;
  long lazy_faults = 0;
  {
    KvCache lazy(c, std::make_unique<FullPolicy>(c.budget));
    lazy_faults = FaultsWhileAppending(lazy, n_tokens);
  }
  // 512 tokens' rows are 16 pages in each of the 64 (layer, head, K or V)
  // arrays.
  EXPECT_GE(lazy_faults, 1000);
  KvCache committed(c, std::make_unique<FullPolicy>(c.budget));
  committed.CommitRows();
  // Not exactly none: while another process compacts memory for huge
  // pages, the kernel may move one of ours, and its next write faults (a
  // CI run under ctest -j2 saw one).
  EXPECT_LE(FaultsWhileAppending(committed, n_tokens), lazy_faults / 100);
  // The rows hold what was appended.
  const KvHeadView v = committed.View(3, 7);
  EXPECT_EQ(v.pos[n_tokens - 1], n_tokens - 1);
  EXPECT_EQ(Element(v, v.k, n_tokens - 1, 63), 0.5f);
  EXPECT_EQ(Element(v, v.v, 0, 0), 0.5f);
}

TEST(KvCache, CommitsRowsOnlyWhileEmpty) {
  KvCache cache(SmallConfig(TensorType::kF16, 8, 8), std::make_unique<FullPolicy>(8));
  cache.CommitRows();
  const std::vector<float> k = Row(0, 0, 1.0f), v = Row(0, 0, -1.0f);
  cache.Append(1, 2, 0, k.data(), v.data());
  EXPECT_DEATH(cache.CommitRows(), "internal check failed");
  cache.Clear();
  cache.CommitRows();
}

TEST(KvCache, PrefetchNextAppendStaysWithinTheCache) {
  // Only hints, but at every fill level up to a full cache, where there is
  // no next slot.
  KvCache cache(SmallConfig(TensorType::kF16, 6, 6), std::make_unique<FullPolicy>(6));
  for (int32_t pos = 0; pos <= 6; ++pos) {
    for (int32_t l = 0; l < 2; ++l) {
      for (int32_t h = 0; h < 3; ++h) {
        cache.PrefetchNextAppend(l, h);
        if (pos == 6) continue;
        const std::vector<float> k = Row(pos, h, 1.0f), v = Row(pos, h, -1.0f);
        cache.Append(l, h, pos, k.data(), v.data());
      }
    }
  }
  EXPECT_EQ(cache.count(1, 2), 6);
}

}  // namespace
}  // namespace h2o
