// A cache whose sliding-window layers are interleaved with global ones, as
// Gemma 3's are: run side by side with a cache of the global layers alone
// (no windows), fed the same K/V rows and the same simulated attention. The
// windowed layers must hold exactly the last W positions after every
// eviction, under every policy and chunking, and track no scores; the
// global layers must be slot for slot what the window-free cache holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/fp16.h"
#include "kv/kept_positions.h"
#include "kv/kv_cache.h"
#include "kv/policies.h"

namespace h2o {
namespace {

using testing::KeptPositions;

constexpr int32_t kHeads = 2;
constexpr int32_t kHeadDim = 4;
constexpr int32_t kTokens = 40;
// Two window sizes; layers 1 and 4 are global.
const std::vector<int32_t> kWindows = {5, 0, 3, 5, 0};
const std::vector<int32_t> kGlobalLayers = {1, 4};

using PolicyMaker = std::function<std::unique_ptr<EvictionPolicy>()>;

struct NamedPolicy {
  std::string name;
  PolicyMaker make;
};

std::vector<NamedPolicy> AllPolicies() {
  return {{"full", [] { return std::make_unique<FullPolicy>(kTokens); }},
          {"h2o", [] { return std::make_unique<H2oPolicy>(4, 3); }},
          {"local", [] { return std::make_unique<LocalPolicy>(6); }},
          {"sink", [] { return std::make_unique<SinkPolicy>(2, 4); }},
          {"tova", [] { return std::make_unique<TovaPolicy>(6); }},
          {"random", [] { return std::make_unique<RandomPolicy>(4, 3, 7); }},
          {"h2only", [] { return std::make_unique<H2onlyPolicy>(6); }}};
}

// Chunk sizes in feeding order; the last repeats until kTokens are fed.
struct Schedule {
  std::string name;
  std::vector<int32_t> chunks;
  int32_t max_chunk() const { return *std::max_element(chunks.begin(), chunks.end()); }
};

std::vector<Schedule> AllSchedules() {
  // 12 > every window: a whole prompt spills past a windowed layer's
  // budget at once and only its last W tokens come home.
  return {{"one at a time", {1}},
          {"threes", {3}},
          {"prompt of 12, then one", {12, 1}},
          {"mixed", {2, 4, 1, 3}}};
}

KvCacheConfig Config(int32_t n_layer, int32_t budget, int32_t capacity) {
  KvCacheConfig c;
  c.n_layer = n_layer;
  c.n_head_kv = kHeads;
  c.head_dim = kHeadDim;
  c.budget = budget;
  c.capacity = capacity;
  c.types = {TensorType::kF16, TensorType::kF16};
  return c;
}

using KvRows = std::array<float, 2 * kHeadDim>;

// Every kept token's K and V rows are the ones appended for it.
void ExpectRows(const KvCache& cache, int32_t l, int32_t h,
                const std::map<std::tuple<int32_t, int32_t, int32_t>, KvRows>& rows) {
  const KvHeadView view = cache.View(l, h);
  for (int32_t s = 0; s < view.n_slots; ++s) {
    if (view.pos[s] < 0) continue;
    const KvRows& want = rows.at({l, h, view.pos[s]});
    const auto* k = static_cast<const uint16_t*>(view.KRow(s));
    const auto* v = static_cast<const uint16_t*>(view.VRow(s));
    for (int32_t i = 0; i < kHeadDim; ++i) {
      ASSERT_EQ(kernels::F16ToF32(k[i]), want[i]) << "layer " << l << " pos " << view.pos[s];
      ASSERT_EQ(kernels::F16ToF32(v[i]), want[kHeadDim + i]) << "layer " << l;
    }
  }
}

// The global layer `l` of `mixed` and layer `r` of `plain`: same slots,
// positions, scores and rows.
void ExpectSameHead(const KvCache& mixed, int32_t l, const KvCache& plain, int32_t r, int32_t h) {
  const KvHeadView a = mixed.View(l, h), b = plain.View(r, h);
  ASSERT_EQ(a.n_slots, b.n_slots) << "layer " << l;
  ASSERT_EQ(mixed.count(l, h), plain.count(r, h));
  ASSERT_EQ(std::vector<int32_t>(a.pos, a.pos + a.n_slots),
            std::vector<int32_t>(b.pos, b.pos + b.n_slots))
      << "layer " << l;
  ASSERT_EQ(mixed.scores(l, h) == nullptr, plain.scores(r, h) == nullptr);
  const size_t row_bytes = RowBytes(TensorType::kF16, kHeadDim);
  for (int32_t s = 0; s < a.n_slots; ++s) {
    if (a.pos[s] < 0) continue;
    if (mixed.scores(l, h) != nullptr) {
      ASSERT_EQ(mixed.scores(l, h)[s], plain.scores(r, h)[s]);
    }
    ASSERT_EQ(std::memcmp(a.KRow(s), b.KRow(s), row_bytes), 0);
    ASSERT_EQ(std::memcmp(a.VRow(s), b.VRow(s), row_bytes), 0);
  }
}

void RunSideBySide(const NamedPolicy& policy, const Schedule& schedule, uint64_t seed) {
  SCOPED_TRACE(policy.name + ", " + schedule.name);
  const int32_t max_chunk = schedule.max_chunk();
  const int32_t budget = policy.make()->budget();
  const int32_t capacity = policy.name == "full" ? kTokens : budget + max_chunk;
  KvCacheConfig mixed_config = Config(static_cast<int32_t>(kWindows.size()), budget, capacity);
  mixed_config.layer_window = kWindows;
  mixed_config.window_chunk = max_chunk;
  KvCache mixed(mixed_config, policy.make());
  KvCache plain(Config(static_cast<int32_t>(kGlobalLayers.size()), budget, capacity),
                policy.make());

  std::mt19937_64 rng(seed);
  // Multiples of 1/64 in [-1, 1] are exact in f16, so rows compare exactly.
  auto value = [&rng] { return static_cast<float>(static_cast<int>(rng() % 129) - 64) / 64.0f; };
  std::map<std::tuple<int32_t, int32_t, int32_t>, KvRows> rows;  // (layer, head, pos)
  int32_t pos = 0;
  for (size_t step = 0; pos < kTokens; ++step) {
    const int32_t chunk =
        std::min(schedule.chunks[std::min(step, schedule.chunks.size() - 1)], kTokens - pos);
    const int32_t end = pos + chunk;
    for (int32_t l = 0; l < mixed_config.n_layer; ++l) {
      const auto global = std::find(kGlobalLayers.begin(), kGlobalLayers.end(), l);
      const int32_t r = static_cast<int32_t>(global - kGlobalLayers.begin());
      const bool is_global = global != kGlobalLayers.end();
      for (int32_t h = 0; h < kHeads; ++h) {
        for (int32_t t = pos; t < end; ++t) {
          KvRows& kv = rows[{l, h, t}];
          for (float& x : kv) x = value();
          mixed.Append(l, h, t, kv.data(), kv.data() + kHeadDim);
          if (is_global) plain.Append(r, h, t, kv.data(), kv.data() + kHeadDim);
        }
        if (!is_global) {
          ASSERT_EQ(mixed.scores(l, h), nullptr) << "windowed layer " << l << " tracks scores";
          ASSERT_EQ(mixed.step_attention(l, h), nullptr);
          continue;
        }
        ASSERT_NO_FATAL_FAILURE(ExpectSameHead(mixed, l, plain, r, h));
        // "Attention": multiples of 1/4 keep sums exact and ties common.
        const KvHeadView view = mixed.View(l, h);
        for (int32_t s = 0; s < view.n_slots; ++s) {
          if (view.pos[s] < 0) continue;
          const double x = 0.25 * static_cast<double>(rng() % 4);
          if (double* score = mixed.scores(l, h)) {
            score[s] += x;
            plain.scores(r, h)[s] += x;
          }
          if (float* attn = mixed.step_attention(l, h)) {
            attn[s] = static_cast<float>(x);
            plain.step_attention(r, h)[s] = static_cast<float>(x);
          }
        }
      }
      mixed.EvictOverBudget(l);
      if (is_global) plain.EvictOverBudget(r);
      for (int32_t h = 0; h < kHeads; ++h) {
        SCOPED_TRACE("layer " + std::to_string(l) + " head " + std::to_string(h) + " after " +
                     std::to_string(end) + " tokens");
        ASSERT_NO_FATAL_FAILURE(ExpectRows(mixed, l, h, rows));
        if (is_global) {
          ASSERT_NO_FATAL_FAILURE(ExpectSameHead(mixed, l, plain, r, h));
          continue;
        }
        const int32_t window = kWindows[l];
        std::vector<int32_t> last;
        for (int32_t p = std::max(0, end - window); p < end; ++p) last.push_back(p);
        ASSERT_EQ(KeptPositions(mixed, l, h), last);
        ASSERT_EQ(mixed.count(l, h), static_cast<int32_t>(last.size()));
        ASSERT_LE(mixed.View(l, h).n_slots, window) << "spilled tokens left after eviction";
        ASSERT_EQ(mixed.View(l, h).n_home, window);
      }
    }
    pos = end;
  }
}

TEST(WindowCache, WindowedLayersKeepTheirLastWAndGlobalLayersAreUnchanged) {
  uint64_t seed = 1;
  for (const NamedPolicy& policy : AllPolicies()) {
    for (const Schedule& schedule : AllSchedules()) {
      RunSideBySide(policy, schedule, seed++);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(WindowCache, EveryLayerWindowedNeedsNoGlobalSlots) {
  // Global budget and capacity are unused; the spill is one window chunk.
  KvCacheConfig c = Config(2, 1, 1);
  c.layer_window = {2, 3};
  c.window_chunk = 4;
  KvCache cache(c, std::make_unique<H2oPolicy>(1, 0));
  EXPECT_EQ(c.spill_slots(), 4);
  EXPECT_EQ(c.max_capacity(), 7);
  const KvRows kv{};
  for (int32_t l = 0; l < 2; ++l) {
    for (int32_t t = 0; t < 4; ++t) cache.Append(l, 1, t, kv.data(), kv.data() + kHeadDim);
    cache.EvictOverBudget(l);
  }
  EXPECT_EQ(KeptPositions(cache, 0, 1), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(KeptPositions(cache, 1, 1), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(cache.scores(0, 1), nullptr);
}

TEST(WindowCache, AccountingMatchesAHandCount) {
  // 3 layers, the middle one a window of 4; 2 KV heads, f32 rows of 4
  // (16 B); global budget 3, capacity 5; windowed capacity 4 + 2.
  KvCacheConfig c = Config(3, 3, 5);
  c.types = {TensorType::kF32, TensorType::kF32};
  c.layer_window = {0, 4, 0};
  c.window_chunk = 2;
  // K/V rows: per head 3 + 4 + 3 home rows and a spill of max(5 - 3, 2) = 2.
  const size_t rows = 2 * (3 + 4 + 3 + 2);
  // A position (4 B) for every slot: per head 5 + 6 + 5; and a freed-slot
  // index (4 B) for each of a head's 2 spill slots.
  const size_t slots = 2 * (5 + 6 + 5);
  // Scores (8 B, h2o) and step attention (4 B, tova) of the global slots only.
  const size_t scored = 2 * (5 + 5);
  for (auto make : {PolicyMaker([] { return std::make_unique<H2oPolicy>(2, 1); }),
                    PolicyMaker([] { return std::make_unique<TovaPolicy>(3); }),
                    PolicyMaker([] { return std::make_unique<LocalPolicy>(3); })}) {
    KvCache cache(c, make());
    const size_t per_scored =
        (cache.policy().needs_scores() ? 8 : 0) + (cache.policy().needs_step_attention() ? 4 : 0);
    const size_t expected = rows * 2 * 16 + slots * 4 + 2 * 2 * 4 + scored * per_scored;
    EXPECT_EQ(cache.AllocatedBytes(), expected) << cache.policy().name();
    EXPECT_EQ(KvCache::AllocatedBytesFor(c, cache.policy()), expected);
  }
  // All zeros is no window at all.
  KvCacheConfig zeros = Config(3, 3, 5);
  KvCacheConfig none = zeros;
  zeros.layer_window = {0, 0, 0};
  H2oPolicy h2o(2, 1);
  EXPECT_EQ(KvCache::AllocatedBytesFor(zeros, h2o), KvCache::AllocatedBytesFor(none, h2o));
}

TEST(WindowCache, FullCacheBytesCountsAWindowedLayerAtMostItsWindow) {
  const std::vector<int32_t> windows = {0, 4, 0};
  // f32 rows of 8 floats (32 B), 2 KV heads, K and V.
  EXPECT_EQ(KvCache::FullCacheBytes(3, 2, 8, {TensorType::kF32, TensorType::kF32}, 10, windows),
            2u * 2 * (10 + 4 + 10) * 32);
  EXPECT_EQ(KvCache::FullCacheBytes(3, 2, 8, {TensorType::kF32, TensorType::kF32}, 3, windows),
            2u * 2 * (3 + 3 + 3) * 32);
  EXPECT_EQ(KvCache::FullCacheBytes(3, 2, 8, {TensorType::kF32, TensorType::kF32}, 10, {}),
            KvCache::FullCacheBytes(3, 2, 8, {TensorType::kF32, TensorType::kF32}, 10));
}

// Feeds positions [from, to) one at a time to every layer, with scores
// added as a simulated attention would.
void Feed(KvCache& cache, int32_t from, int32_t to, std::mt19937_64& rng) {
  const KvCacheConfig& c = cache.config();
  for (int32_t t = from; t < to; ++t) {
    for (int32_t l = 0; l < c.n_layer; ++l) {
      for (int32_t h = 0; h < c.n_head_kv; ++h) {
        KvRows kv;
        for (float& x : kv) x = static_cast<float>(rng() % 64) / 8.0f;
        cache.Append(l, h, t, kv.data(), kv.data() + kHeadDim);
        if (double* score = cache.scores(l, h)) {
          const KvHeadView view = cache.View(l, h);
          for (int32_t s = 0; s < view.n_slots; ++s) {
            if (view.pos[s] >= 0) score[s] += static_cast<double>(rng() % 4) * 0.5;
          }
        }
      }
      cache.EvictOverBudget(l);
    }
  }
}

void ExpectSameState(const KvCache& a, const KvCache& b) {
  for (int32_t l = 0; l < a.config().n_layer; ++l) {
    for (int32_t h = 0; h < a.config().n_head_kv; ++h) ExpectSameHead(a, l, b, l, h);
  }
}

TEST(WindowCache, CopyFromRestoresEveryLayer) {
  for (bool random : {false, true}) {
    auto make = [random]() -> std::unique_ptr<EvictionPolicy> {
      if (random) return std::make_unique<RandomPolicy>(2, 2, 5);
      return std::make_unique<H2oPolicy>(2, 2);
    };
    KvCacheConfig c = Config(static_cast<int32_t>(kWindows.size()), 4, 5);
    c.layer_window = kWindows;
    c.window_chunk = 1;
    KvCache cache(c, make()), saved(c, make()), replay(c, make());
    std::mt19937_64 rng(11);
    Feed(cache, 0, 9, rng);
    saved.CopyFrom(cache);
    ExpectSameState(saved, cache);
    // The continuation and a replay of it from the saved state agree, so
    // the copy carried everything later evictions read (random's draws too).
    const std::mt19937_64 at_save = rng;
    Feed(cache, 9, 20, rng);
    replay.CopyFrom(saved);
    rng = at_save;
    Feed(replay, 9, 20, rng);
    ExpectSameState(replay, cache);
    EXPECT_EQ(KeptPositions(replay, 0, 0), (std::vector<int32_t>{15, 16, 17, 18, 19}));
  }
}

TEST(WindowCache, CopyFromRequiresTheSameWindows) {
  KvCacheConfig c = Config(2, 2, 3);
  c.layer_window = {3, 0};
  c.window_chunk = 1;
  KvCacheConfig other = c;
  other.layer_window = {4, 0};
  KvCache a(c, std::make_unique<LocalPolicy>(2));
  KvCache b(other, std::make_unique<LocalPolicy>(2));
  EXPECT_DEATH(a.CopyFrom(b), "internal check failed: other.config_ == config_");
}

}  // namespace
}  // namespace h2o
