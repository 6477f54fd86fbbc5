// SessionKvConfig: the cache a session allocates for a model with
// sliding-window layers, checked against hand-worked shapes.
#include "runtime/kv_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace h2o {
namespace {

HParams Model(std::vector<int32_t> windows) {
  HParams hp;
  hp.n_layer = static_cast<int32_t>(windows.size());
  hp.n_head_kv = 2;
  hp.head_dim = 8;
  hp.layer_window = std::move(windows);
  return hp;
}

KvPlan Plan(const std::string& policy, int32_t budget) {
  KvPlan p;
  p.policy = policy;
  p.budget = budget;
  return p;
}

TEST(SessionKvConfig, WithoutWindowsAsBefore) {
  const HParams hp = Model({});
  const KvCacheConfig full = SessionKvConfig(hp, Plan("full", 0), 32, 4, false, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(full.budget, 32);
  EXPECT_EQ(full.capacity, 32);
  EXPECT_TRUE(full.layer_window.empty());
  EXPECT_EQ(full.spill_slots(), 0);
  const KvCacheConfig h2o = SessionKvConfig(hp, Plan("h2o", 10), 32, 4, false, {TensorType::kF32, TensorType::kF32});
  EXPECT_EQ(h2o.budget, 10);
  EXPECT_EQ(h2o.capacity, 14);
  EXPECT_EQ(h2o.types, (KvTypes{TensorType::kF32, TensorType::kF32}));
  // A budget past the context is capped at it.
  const KvCacheConfig big = SessionKvConfig(hp, Plan("h2o", 40), 32, 4, false, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(big.budget, 32);
  EXPECT_EQ(big.capacity, 32);
}

TEST(SessionKvConfig, WindowedLayersKeepTheirWindowPlusAChunkWhateverThePolicy) {
  const HParams hp = Model({8, 0, 8, 0});
  for (const KvPlan& plan : {Plan("full", 0), Plan("h2o", 4), Plan("local", 20)}) {
    SCOPED_TRACE(plan.policy);
    const KvCacheConfig c = SessionKvConfig(hp, plan, 32, 4, false, {TensorType::kF16, TensorType::kF16});
    EXPECT_EQ(c.layer_window, (std::vector<int32_t>{8, 0, 8, 0}));
    EXPECT_EQ(c.window_chunk, 4);
    EXPECT_EQ(c.layer_budget(0), 8);
    EXPECT_EQ(c.layer_capacity(2), 12);
  }
  // Full: the global layers hold the context and spill nothing; the
  // windowed ones spill a chunk.
  const KvCacheConfig full = SessionKvConfig(hp, Plan("full", 0), 32, 4, false, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(full.layer_budget(1), 32);
  EXPECT_EQ(full.spill_slots(), 4);
  EXPECT_EQ(full.max_capacity(), 32);
}

TEST(SessionKvConfig, NothingHoldsMoreThanTheContext) {
  const HParams hp = Model({8, 0});
  // Context 6 < window 8: the window holds every position there is.
  const KvCacheConfig tiny = SessionKvConfig(hp, Plan("h2o", 10), 6, 4, false, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(tiny.layer_window, (std::vector<int32_t>{6, 0}));
  EXPECT_EQ(tiny.window_chunk, 0);
  EXPECT_EQ(tiny.budget, 6);
  EXPECT_EQ(tiny.capacity, 6);
  // Context 10: a window of 8 plus at most 2 more.
  const KvCacheConfig ten = SessionKvConfig(hp, Plan("h2o", 4), 10, 4, false, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(ten.layer_window[0], 8);
  EXPECT_EQ(ten.window_chunk, 2);
  // With pos-shift positions run past the context: nothing is capped.
  const KvCacheConfig shift = SessionKvConfig(hp, Plan("h2o", 10), 6, 4, true, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(shift.layer_window[0], 8);
  EXPECT_EQ(shift.window_chunk, 4);
  EXPECT_EQ(shift.capacity, 14);
}

TEST(SessionKvConfig, TheSmallestWindowSetsTheChunk) {
  // Context 12, chunk 4: the 8-window needs 4 more, the 16-window (capped
  // at 12) none, and one chunk serves both.
  const HParams hp = Model({8, 16, 0});
  const KvCacheConfig c = SessionKvConfig(hp, Plan("local", 2), 12, 4, false, {TensorType::kF16, TensorType::kF16});
  EXPECT_EQ(c.layer_window, (std::vector<int32_t>{8, 12, 0}));
  EXPECT_EQ(c.window_chunk, 4);
  EXPECT_EQ(c.spill_slots(), 4);
}

}  // namespace
}  // namespace h2o

namespace h2o {
namespace {

// pyramid=BETA (kv/pyramid.h): each global layer its own budget, a sliding
// one its window, and every layer room for a chunk up to the context.
TEST(SessionKvConfig, PyramidBudgetsPerGlobalLayer) {
  const HParams hp = Model({0, 8, 0, 0});
  KvPlan plan = Plan("h2o", 16);
  plan.heavy = 12;
  plan.recent = 4;
  plan.pyramid = 6;  // heavy 12 over 3 global layers: 22, 12, 2
  const KvTypes f16 = {TensorType::kF16, TensorType::kF16};
  const KvCacheConfig c = SessionKvConfig(hp, plan, 1000, 4, false, f16);
  EXPECT_EQ(c.layer_budgets, (std::vector<int32_t>{26, 0, 16, 6}));
  EXPECT_EQ(c.layer_budget(0), 26);
  EXPECT_EQ(c.layer_budget(1), 8);
  EXPECT_EQ(c.layer_capacity(3), 10);
  KvPlan flat = plan;
  flat.pyramid = 0;
  EXPECT_EQ(KvCache::RowBytesFor(c), KvCache::RowBytesFor(SessionKvConfig(hp, flat, 1000, 4, false, f16)));
  // A context of 20 and chunks of 16: the lowest layer is capped at 20,
  // and every layer can hold min(its budget + a chunk, the context).
  const KvCacheConfig small = SessionKvConfig(hp, plan, 20, 16, false, f16);
  EXPECT_EQ(small.layer_budget(0), 20);
  for (int32_t l : {0, 2, 3}) {
    EXPECT_GE(small.layer_capacity(l), std::min(small.layer_budget(l) + 16, 20)) << l;
  }
}

}  // namespace
}  // namespace h2o
