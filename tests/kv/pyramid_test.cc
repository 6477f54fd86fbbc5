// PyramidKV's per-layer budgets (kv/pyramid.h): the schedule against its
// formulas and the same total, and a KvCache that keeps each layer's own
// budget, checked against a per-layer simulation of h2o.
#include "kv/pyramid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "kv/kept_positions.h"
#include "kv/kv_cache.h"
#include "kv/policies.h"
#include "kv/snapkv.h"

namespace h2o {
namespace {

using testing::KeptPositions;

KvPlan H2oPlan(int32_t heavy, int32_t recent, int32_t pyramid) {
  KvPlan plan;
  plan.policy = "h2o";
  plan.heavy = heavy;
  plan.recent = recent;
  plan.budget = heavy + recent;
  plan.pyramid = pyramid;
  return plan;
}

TEST(Pyramid, OffIsEmpty) { EXPECT_TRUE(PyramidLayerBudgets(H2oPlan(8, 8, 0), 4).empty()); }

TEST(Pyramid, ThePapersArithmeticScheduleAtTheSameTotal) {
  // heavy 100 over 5 layers, beta 20: top 5, bottom 195, steps of 47.5
  // floored (195, 147, 100, 52, 5), the lost token to the lowest layer.
  EXPECT_EQ(PyramidLayerBudgets(H2oPlan(100, 10, 20), 5),
            (std::vector<int32_t>{206, 157, 110, 62, 15}));
  // beta 1 is flat.
  EXPECT_EQ(PyramidLayerBudgets(H2oPlan(100, 10, 1), 5), std::vector<int32_t>(5, 110));
  // One layer keeps the plan's budget.
  EXPECT_EQ(PyramidLayerBudgets(H2oPlan(7, 3, 20), 1), std::vector<int32_t>{10});
  // A heavy part smaller than beta still leaves the top layer 1 heavy hitter.
  EXPECT_EQ(PyramidLayerBudgets(H2oPlan(3, 0, 20), 3), (std::vector<int32_t>{5, 3, 1}));
  // No heavy part: nothing to scale.
  EXPECT_EQ(PyramidLayerBudgets(H2oPlan(0, 4, 20), 3), std::vector<int32_t>(3, 4));
}

TEST(Pyramid, SumIsExactMonotoneAndAtLeastOne) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 3000; ++iter) {
    const int32_t n_layer = 1 + static_cast<int32_t>(rng() % 40);
    const int32_t heavy = static_cast<int32_t>(rng() % 300);
    const int32_t recent = static_cast<int32_t>(rng() % 20) + (heavy == 0 ? 1 : 0);
    const int32_t beta = 1 + static_cast<int32_t>(rng() % 50);
    std::vector<int32_t> window;
    if (iter % 3 == 0) {
      for (int32_t l = 0; l < n_layer; ++l) window.push_back(rng() % 3 == 0 ? 16 : 0);
    }
    const std::vector<int32_t> b = PyramidLayerBudgets(H2oPlan(heavy, recent, beta), n_layer, window);
    ASSERT_EQ(b.size(), static_cast<size_t>(n_layer));
    int64_t sum = 0;
    int32_t n_global = 0, last = INT32_MAX;
    for (int32_t l = 0; l < n_layer; ++l) {
      if (!window.empty() && window[l] > 0) {
        ASSERT_EQ(b[l], 0);
        continue;
      }
      ++n_global;
      sum += b[l];
      ASSERT_GE(b[l], std::max(1, recent + (heavy > 0 ? 1 : 0))) << "layer " << l;
      ASSERT_LE(b[l], last) << "layer " << l;
      last = b[l];
    }
    ASSERT_EQ(sum, static_cast<int64_t>(n_global) * (heavy + recent)) << "iter " << iter;
  }
}

TEST(Pyramid, SnapKvScalesTheSelectionAndKeepsTheWindow) {
  KvPlan plan;
  plan.policy = "snapkv";
  plan.k = plan.budget = 64;
  plan.window = 16;
  plan.kernel = 7;
  plan.pyramid = 4;  // S = 48: top 12, bottom 84
  EXPECT_EQ(PyramidLayerBudgets(plan, 4), (std::vector<int32_t>{100, 76, 52, 28}));
}

// h2o through a cache whose global layers keep their pyramid budgets,
// against a per-layer simulation (the victim: lowest score outside the
// recent window, ties to the lowest position).
TEST(Pyramid, CacheKeepsEachLayersBudget) {
  constexpr int32_t kLayers = 4, kHeads = 2, kHeadDim = 4, kMaxChunk = 5;
  const KvPlan plan = H2oPlan(12, 4, 6);
  std::vector<int32_t> window = {0, 8, 0, 0};  // layer 1 slides
  KvCacheConfig config;
  config.n_layer = kLayers;
  config.n_head_kv = kHeads;
  config.head_dim = kHeadDim;
  config.budget = plan.budget;
  config.capacity = plan.budget + kMaxChunk;
  config.layer_window = window;
  config.window_chunk = kMaxChunk;
  config.layer_budgets = PyramidLayerBudgets(plan, kLayers, window);
  ASSERT_EQ(config.layer_budgets, (std::vector<int32_t>{26, 0, 16, 6}));
  // The same bytes as every global layer at the plan's budget.
  KvCacheConfig flat = config;
  flat.layer_budgets.clear();
  const H2oPolicy sizing(plan.heavy, plan.recent);
  EXPECT_EQ(KvCache::AllocatedBytesFor(config, sizing), KvCache::AllocatedBytesFor(flat, sizing));
  EXPECT_EQ(KvCache::RowBytesFor(config), KvCache::RowBytesFor(flat));

  KvCache cache(config, std::make_unique<H2oPolicy>(plan.heavy, plan.recent));
  std::mt19937_64 rng(9);
  struct Token {
    int32_t pos;
    double score;
  };
  std::vector<std::vector<Token>> sim(kLayers * kHeads);
  const std::array<float, kHeadDim> row{};
  int32_t pos = 0;
  while (pos < 300) {
    const int32_t chunk = 1 + static_cast<int32_t>(rng() % kMaxChunk);
    for (int32_t l = 0; l < kLayers; ++l) {
      for (int32_t h = 0; h < kHeads; ++h) {
        for (int32_t t = pos; t < pos + chunk; ++t) cache.Append(l, h, t, row.data(), row.data());
        if (config.windowed(l)) continue;
        std::vector<Token>& tokens = sim[l * kHeads + h];
        for (int32_t t = pos; t < pos + chunk; ++t) tokens.push_back({t, 0.0});
        const KvHeadView view = cache.View(l, h);
        for (Token& token : tokens) {
          const double x = 0.25 * static_cast<double>(rng() % 4);
          token.score += x;
          for (int32_t s = 0; s < view.n_slots; ++s) {
            if (view.pos[s] == token.pos) cache.scores(l, h)[s] += x;
          }
        }
        const auto budget = static_cast<size_t>(config.layer_budgets[l]);
        while (tokens.size() > budget) {  // positions ascending
          const auto end = tokens.end() - plan.recent;
          tokens.erase(std::min_element(tokens.begin(), end, [](const Token& a, const Token& b) {
            return a.score < b.score;
          }));
        }
      }
      cache.EvictOverBudget(l);
      for (int32_t h = 0; h < kHeads; ++h) {
        const std::vector<int32_t> kept = KeptPositions(cache, l, h);
        if (config.windowed(l)) {
          ASSERT_EQ(kept.size(), std::min<size_t>(pos + chunk, 8));
          continue;
        }
        std::vector<int32_t> expected;
        for (const Token& t : sim[l * kHeads + h]) expected.push_back(t.pos);
        ASSERT_EQ(kept, expected) << "layer " << l << " head " << h << " at " << pos + chunk;
        ASSERT_EQ(cache.count(l, h), std::min(pos + chunk, config.layer_budgets[l]));
      }
    }
    pos += chunk;
  }
}

}  // namespace
}  // namespace h2o
