// SnapKV (kv/snapkv.h) against a brute-force simulation written here: the
// selection by sorting max-pooled scores, then a sliding window, on bare
// metadata and through a real KvCache fed in random chunks.
#include "kv/snapkv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "kv/kept_positions.h"
#include "kv/kv_cache.h"

namespace h2o {
namespace {

using testing::KeptPositions;

// The selection, brute force: candidates are positions 0..n-window-1 (all
// of 0..n-1 are present); pooled[p] is the largest score at a candidate
// position within kernel/2 of p; the candidates with the lowest (pooled,
// position) go until `budget` tokens remain. Returns the kept positions.
std::vector<int32_t> BruteSelect(const std::vector<double>& score_by_pos, int32_t budget,
                                 int32_t window, int32_t kernel) {
  const auto n = static_cast<int32_t>(score_by_pos.size());
  const int32_t candidates = n - window;
  std::vector<std::pair<double, int32_t>> ranked;
  for (int32_t p = 0; p < candidates; ++p) {
    double pooled = score_by_pos[p];
    for (int32_t q = p - kernel / 2; q <= p + kernel / 2; ++q) {
      if (q >= 0 && q < candidates) pooled = std::max(pooled, score_by_pos[q]);
    }
    ranked.push_back({pooled, p});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<int32_t> kept;
  for (size_t i = static_cast<size_t>(n - budget); i < ranked.size(); ++i) {
    kept.push_back(ranked[i].second);
  }
  for (int32_t p = candidates; p < n; ++p) kept.push_back(p);
  std::sort(kept.begin(), kept.end());
  return kept;
}

struct Head {
  std::vector<int32_t> pos;
  std::vector<double> score;
  int32_t count = 0;
  int32_t newest_pos = -1;

  HeadMetadata Meta() const {
    HeadMetadata m;
    m.pos = pos.data();
    m.score = score.data();
    m.n_slots = static_cast<int32_t>(pos.size());
    m.count = count;
    m.newest_pos = newest_pos;
    return m;
  }
  std::vector<int32_t> Kept() const {
    std::vector<int32_t> kept;
    for (int32_t p : pos) {
      if (p >= 0) kept.push_back(p);
    }
    std::sort(kept.begin(), kept.end());
    return kept;
  }
  void Evict(int32_t slot) {
    ASSERT_GE(pos[slot], 0);
    pos[slot] = -1;
    score[slot] = 0.0;
    --count;
  }
  // Puts `p` in a free slot, or a new one.
  void Append(int32_t p) {
    const auto free = std::find(pos.begin(), pos.end(), -1);
    if (free == pos.end()) {
      pos.push_back(p);
      score.push_back(0.0);
    } else {
      *free = p;
    }
    ++count;
    newest_pos = std::max(newest_pos, p);
  }
};

TEST(SnapKv, NameBudgetAndNeeds) {
  SnapKvPolicy policy(64, 16, 7);
  EXPECT_EQ(policy.name(), "snapkv");
  EXPECT_EQ(policy.budget(), 64);
  EXPECT_EQ(policy.window(), 16);
  EXPECT_EQ(policy.kernel(), 7);
  EXPECT_TRUE(policy.needs_scores());
  EXPECT_FALSE(policy.needs_step_attention());
  EXPECT_EQ(policy.observation_window(), 16);
  EXPECT_EQ(policy.score_decay(), 1.0);
}

TEST(SnapKv, SelectsThePooledTopThenSlidesTheWindow) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 2000; ++iter) {
    const int32_t window = 1 + static_cast<int32_t>(rng() % 6);
    const int32_t budget = window + 1 + static_cast<int32_t>(rng() % 10);
    const int32_t n = budget + 1 + static_cast<int32_t>(rng() % 30);  // the first overflow
    const int32_t kernel = 1 + 2 * static_cast<int32_t>(rng() % (iter % 3 == 0 ? 20 : 4));
    const bool tied = iter % 2 == 0;
    // Positions 0..n-1 in shuffled slots, with some empty slots.
    Head head;
    head.pos.resize(n);
    for (int32_t p = 0; p < n; ++p) head.pos[p] = p;
    head.pos.insert(head.pos.end(), static_cast<size_t>(rng() % 4), -1);
    std::shuffle(head.pos.begin(), head.pos.end(), rng);
    std::vector<double> by_pos(n);
    std::uniform_real_distribution<double> real(0.0, 2.0);
    for (double& x : by_pos) x = tied ? 0.5 * static_cast<double>(rng() % 3) : real(rng);
    for (int32_t p : head.pos) head.score.push_back(p >= 0 ? by_pos[p] : 0.0);
    head.count = n;
    head.newest_pos = n - 1;

    SnapKvPolicy policy(budget, window, kernel);
    while (head.count > budget) head.Evict(policy.ChooseVictim(head.Meta()));
    const std::vector<int32_t> selected = BruteSelect(by_pos, budget, window, kernel);
    ASSERT_EQ(head.Kept(), selected) << "iter " << iter << " n " << n << " budget " << budget
                                     << " window " << window << " kernel " << kernel;

    // Decoding: new scores do not matter any more; the newest token
    // outside the window goes, so the selection stays and the window slides.
    for (int32_t step = 0; step < 12; ++step) {
      const int32_t p = n + step;
      head.Append(p);
      for (double& x : head.score) x = real(rng);
      head.Evict(policy.ChooseVictim(head.Meta()));
      std::vector<int32_t> expected(selected.begin(), selected.end() - window);
      for (int32_t q = p - window + 1; q <= p; ++q) expected.push_back(q);
      ASSERT_EQ(head.Kept(), expected) << "iter " << iter << " step " << step;
    }
  }
}

TEST(SnapKv, KernelOneIsTheRawScoreAndPoolingKeepsNeighbours) {
  // Candidates 0..7 (window 2 of 10); one sharp peak at position 3.
  const std::vector<double> by_pos = {0.1, 0.2, 0.1, 5.0, 0.3, 0.1, 0.2, 0.1, 1.0, 1.0};
  EXPECT_EQ(BruteSelect(by_pos, 5, 2, 1), (std::vector<int32_t>{3, 4, 6, 8, 9}));
  // Pooled over 3: positions 2, 3, 4 all score 5.0 and are kept.
  EXPECT_EQ(BruteSelect(by_pos, 5, 2, 3), (std::vector<int32_t>{2, 3, 4, 8, 9}));
  for (const int32_t kernel : {1, 3}) {
    Head head;
    for (int32_t p = 0; p < 10; ++p) head.Append(p);
    head.score = by_pos;
    SnapKvPolicy policy(5, 2, kernel);
    while (head.count > 5) head.Evict(policy.ChooseVictim(head.Meta()));
    EXPECT_EQ(head.Kept(), BruteSelect(by_pos, 5, 2, kernel)) << kernel;
  }
}

// Through a KvCache: chunks of random size; each pass clears the scores and
// adds random "attention" (what the forward does for an observation
// window); the simulation selects once at the first overflow, then drops
// the newest token outside the window.
TEST(SnapKv, CacheKeepsWhatTheSimulationKeeps) {
  constexpr int32_t kLayers = 2, kHeads = 2, kHeadDim = 4, kMaxChunk = 40;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    const int32_t window = 1 + static_cast<int32_t>(rng() % 8);
    const int32_t budget = window + 1 + static_cast<int32_t>(rng() % 20);
    const int32_t kernel = 1 + 2 * static_cast<int32_t>(rng() % 4);
    KvCacheConfig config;
    config.n_layer = kLayers;
    config.n_head_kv = kHeads;
    config.head_dim = kHeadDim;
    config.budget = budget;
    config.capacity = budget + kMaxChunk;
    KvCache cache(config, std::make_unique<SnapKvPolicy>(budget, window, kernel));
    std::vector<std::vector<int32_t>> sim(kLayers * kHeads);
    std::vector<bool> selected(kLayers * kHeads, false);
    const std::array<float, kHeadDim> row{};
    int32_t pos = 0;
    while (pos < 200) {
      const int32_t chunk = 1 + static_cast<int32_t>(rng() % kMaxChunk);
      for (int32_t l = 0; l < kLayers; ++l) {
        for (int32_t h = 0; h < kHeads; ++h) {
          for (int32_t t = pos; t < pos + chunk; ++t) cache.Append(l, h, t, row.data(), row.data());
          const KvHeadView view = cache.View(l, h);
          double* scores = cache.scores(l, h);
          std::vector<double> by_pos(pos + chunk, 0.0);
          for (int32_t s = 0; s < view.n_slots; ++s) {
            scores[s] = 0.0;
            if (view.pos[s] < 0) continue;
            scores[s] = 0.25 * static_cast<double>(rng() % 8);
            by_pos[view.pos[s]] = scores[s];
          }
          std::vector<int32_t>& kept = sim[l * kHeads + h];
          for (int32_t t = pos; t < pos + chunk; ++t) kept.push_back(t);
          if (static_cast<int32_t>(kept.size()) <= budget) continue;
          if (!selected[l * kHeads + h]) {
            kept = BruteSelect(by_pos, budget, window, kernel);
            selected[l * kHeads + h] = true;
          } else {
            // Drop the newest tokens outside the last `window` positions.
            const auto over = static_cast<int32_t>(kept.size()) - budget;
            kept.erase(kept.end() - window - over, kept.end() - window);
          }
        }
        cache.EvictOverBudget(l);
        for (int32_t h = 0; h < kHeads; ++h) {
          ASSERT_EQ(KeptPositions(cache, l, h), sim[l * kHeads + h])
              << "seed " << seed << " layer " << l << " head " << h << " at " << pos + chunk;
        }
      }
      pos += chunk;
    }
  }
}

}  // namespace
}  // namespace h2o
