// Eviction policies on metadata alone: every victim is compared with a
// brute-force choice written independently here (sort, exclude the recent
// window, take the minimum), over thousands of random heads that include
// empty slots, non-contiguous positions and many exact ties.
#include "kv/policies.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <tuple>
#include <vector>

namespace h2o {
namespace {

// One head's metadata, owned.
struct Head {
  std::vector<int32_t> pos;
  std::vector<double> score;
  std::vector<float> step;
  int32_t count = 0;
  int32_t newest_pos = -1;

  HeadMetadata Meta() const {
    return {.pos = pos.data(), .score = score.data(), .step_attention = step.data(),
            .n_slots = static_cast<int32_t>(pos.size()), .count = count,
            .newest_pos = newest_pos};
  }
};

// A random head with `n` present tokens. When `window` > 0 the positions are
// engine-like: the `window` highest are contiguous (so the policies' fast
// path applies); otherwise positions are arbitrary distinct values. Scores
// come from a 4-value set half the time, so exact ties are common.
Head RandomHead(std::mt19937_64& rng, int32_t n, int32_t window) {
  std::uniform_int_distribution<int32_t> coin(0, 1);
  const bool tied = coin(rng) == 1;
  std::set<int32_t> positions;
  if (window > 0) {
    const int32_t newest = n - 1 + static_cast<int32_t>(rng() % 50);
    for (int32_t p = newest - window + 1; p <= newest; ++p) positions.insert(p);
    while (static_cast<int32_t>(positions.size()) < n) {
      positions.insert(static_cast<int32_t>(rng() % (newest - window + 1)));
    }
  } else {
    while (static_cast<int32_t>(positions.size()) < n) {
      positions.insert(static_cast<int32_t>(rng() % (4 * n + 8)));
    }
  }
  const int32_t n_empty = static_cast<int32_t>(rng() % 5);
  Head head;
  head.pos.assign(positions.begin(), positions.end());
  head.pos.insert(head.pos.end(), n_empty, -1);
  std::shuffle(head.pos.begin(), head.pos.end(), rng);
  std::uniform_real_distribution<double> real(0.0, 3.0);
  for (int32_t p : head.pos) {
    (void)p;
    head.score.push_back(tied ? 0.5 * static_cast<double>(rng() % 4) : real(rng));
    head.step.push_back(tied ? 0.25f * static_cast<float>(rng() % 4)
                             : static_cast<float>(real(rng)));
  }
  head.count = n;
  head.newest_pos = *positions.rbegin();
  // The cache's newest_pos can exceed every present position once the
  // newest token is evicted (h2only, tova); the policies must not rely on it.
  if (window == 0 && coin(rng) == 1) head.newest_pos += static_cast<int32_t>(rng() % 3);
  return head;
}

// Slots of present tokens outside the `recent` highest positions, by sorting.
std::vector<int32_t> BruteCandidates(const Head& head, int32_t recent) {
  std::vector<int32_t> present;
  for (int32_t s = 0; s < static_cast<int32_t>(head.pos.size()); ++s) {
    if (head.pos[s] >= 0) present.push_back(s);
  }
  std::sort(present.begin(), present.end(),
            [&](int32_t a, int32_t b) { return head.pos[a] > head.pos[b]; });
  present.erase(present.begin(), present.begin() + recent);
  std::sort(present.begin(), present.end());
  return present;
}

// Argmin of (key, position) over the candidates.
template <typename Key>
int32_t BruteArgMin(const Head& head, const std::vector<int32_t>& candidates, Key key) {
  return *std::min_element(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
    return std::make_tuple(key(a), head.pos[a]) < std::make_tuple(key(b), head.pos[b]);
  });
}

int32_t DrawSize(std::mt19937_64& rng) { return 1 + static_cast<int32_t>(rng() % 40); }

// recent in [0, n - 1], with the edges 0 and n - 1 drawn often.
int32_t DrawRecent(std::mt19937_64& rng, int32_t n) {
  switch (rng() % 4) {
    case 0: return 0;
    case 1: return n - 1;
    default: return static_cast<int32_t>(rng() % n);
  }
}

TEST(Policies, NamesBudgetsAndNeeds) {
  EXPECT_EQ(FullPolicy(100).name(), "full");
  EXPECT_EQ(FullPolicy(100).budget(), 100);
  EXPECT_EQ(LocalPolicy(7).name(), "local");
  EXPECT_EQ(LocalPolicy(7).budget(), 7);
  EXPECT_EQ(SinkPolicy(4, 7).name(), "sink");
  EXPECT_EQ(SinkPolicy(4, 7).budget(), 11);
  EXPECT_EQ(H2oPolicy(5, 6).name(), "h2o");
  EXPECT_EQ(H2oPolicy(5, 6).budget(), 11);
  EXPECT_EQ(H2onlyPolicy(5).name(), "h2only");
  EXPECT_EQ(H2onlyPolicy(5).budget(), 5);
  EXPECT_EQ(TovaPolicy(9).name(), "tova");
  EXPECT_EQ(TovaPolicy(9).budget(), 9);
  EXPECT_EQ(RandomPolicy(3, 4, 1).name(), "random");
  EXPECT_EQ(RandomPolicy(3, 4, 1).budget(), 7);

  EXPECT_TRUE(H2oPolicy(1, 1).needs_scores());
  EXPECT_TRUE(H2onlyPolicy(1).needs_scores());
  EXPECT_TRUE(TovaPolicy(1).needs_step_attention());
  EXPECT_FALSE(TovaPolicy(1).needs_scores());
  EXPECT_FALSE(H2oPolicy(1, 1).needs_step_attention());
  std::vector<std::unique_ptr<EvictionPolicy>> plain;
  plain.push_back(std::make_unique<FullPolicy>(4));
  plain.push_back(std::make_unique<LocalPolicy>(4));
  plain.push_back(std::make_unique<SinkPolicy>(1, 4));
  plain.push_back(std::make_unique<RandomPolicy>(1, 1, 0));
  for (const auto& p : plain) {
    EXPECT_FALSE(p->needs_scores()) << p->name();
    EXPECT_FALSE(p->needs_step_attention()) << p->name();
  }
}

TEST(Policies, RecentWindowStartSplitsOffExactlyTheRecentHighest) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 3000; ++iter) {
    const int32_t n = DrawSize(rng) + 1;
    const int32_t recent = DrawRecent(rng, n);
    const Head head = RandomHead(rng, n, iter % 2 == 0 ? recent : 0);
    const int64_t start = RecentWindowStart(head.Meta(), recent);
    std::vector<int32_t> expected_candidates = BruteCandidates(head, recent);
    std::vector<int32_t> candidates;
    for (int32_t s = 0; s < static_cast<int32_t>(head.pos.size()); ++s) {
      if (head.pos[s] >= 0 && head.pos[s] < start) candidates.push_back(s);
    }
    ASSERT_EQ(candidates, expected_candidates) << "iter " << iter << " recent " << recent;
  }
}

TEST(Policies, H2oVictimIsBruteForceArgmin) {
  std::mt19937_64 rng(1);
  for (int iter = 0; iter < 5000; ++iter) {
    const int32_t n = DrawSize(rng);
    const int32_t recent = DrawRecent(rng, n);
    const bool engine_like = iter % 2 == 0;
    const Head head = RandomHead(rng, n, engine_like ? recent : 0);
    H2oPolicy policy(/*heavy=*/1, recent);
    const std::vector<int32_t> candidates = BruteCandidates(head, recent);
    const int32_t expected = BruteArgMin(head, candidates, [&](int32_t s) { return head.score[s]; });
    ASSERT_EQ(policy.ChooseVictim(head.Meta()), expected)
        << "iter " << iter << " n " << n << " recent " << recent;
  }
}

TEST(Policies, H2oBreaksTiesToLowestPosition) {
  Head head;
  head.pos = {9, 3, -1, 7, 5, 10};
  head.score = {1.0, 1.0, 0.0, 1.0, 1.0, 0.0};  // the empty slot's 0 must be ignored
  head.step.assign(6, 0.0f);
  head.count = 5;
  head.newest_pos = 10;
  EXPECT_EQ(H2oPolicy(3, 1).ChooseVictim(head.Meta()), 1);   // pos 3 among {3,5,7,9}
  EXPECT_EQ(H2oPolicy(3, 0).ChooseVictim(head.Meta()), 5);   // pos 10 scores 0, not protected
  head.score[1] = 2.0;
  EXPECT_EQ(H2oPolicy(3, 1).ChooseVictim(head.Meta()), 4);   // pos 5 is next
  EXPECT_EQ(H2oPolicy(3, 4).ChooseVictim(head.Meta()), 1);   // only pos 3 is a candidate
}

TEST(Policies, H2oMeanVictimIsBruteForceArgminOfScorePerQuery) {
  std::mt19937_64 rng(12);
  for (int iter = 0; iter < 5000; ++iter) {
    const int32_t n = DrawSize(rng);
    const int32_t recent = DrawRecent(rng, n);
    const Head head = RandomHead(rng, n, iter % 2 == 0 ? recent : 0);
    H2oPolicy policy(1, recent, H2oScore::Mean());
    const std::vector<int32_t> candidates = BruteCandidates(head, recent);
    // Queries at positions pos..newest_pos have seen the token.
    const int32_t expected = BruteArgMin(head, candidates, [&](int32_t s) {
      const int32_t queries = head.newest_pos + 1 - head.pos[s];
      return head.score[s] / queries;
    });
    ASSERT_EQ(policy.ChooseVictim(head.Meta()), expected)
        << "iter " << iter << " n " << n << " recent " << recent;
  }
}

TEST(Policies, H2oScoreVariantsDisagreeWhereTheyShould) {
  Head head;
  head.pos = {0, 1, 2, 3};
  head.score = {2.0, 1.5, 1.2, 0.1};
  head.step.assign(4, 0.0f);
  head.count = 4;
  head.newest_pos = 3;
  // sum: 1.2 at pos 2 is the least. mean: 2/4 = 1.5/3 = 0.5 < 1.2/2, a tie
  // that goes to pos 0.
  EXPECT_EQ(H2oPolicy(2, 1).ChooseVictim(head.Meta()), 2);
  EXPECT_EQ(H2oPolicy(2, 1, H2oScore::Mean()).ChooseVictim(head.Meta()), 0);
  // ema ranks the scores as they are (the cache keeps them decayed).
  EXPECT_EQ(H2oPolicy(2, 1, H2oScore::Ema(0.5)).ChooseVictim(head.Meta()),
            2);
  EXPECT_EQ(H2oPolicy(2, 1).score_decay(), 1.0);
  EXPECT_EQ(H2oPolicy(2, 1, H2oScore::Mean()).score_decay(), 1.0);
  EXPECT_EQ(H2oPolicy(2, 1, H2oScore::Ema(0.75)).score_decay(), 0.75);
}

TEST(Policies, H2onlyVictimIsBruteForceArgmin) {
  std::mt19937_64 rng(2);
  for (int iter = 0; iter < 5000; ++iter) {
    const Head head = RandomHead(rng, DrawSize(rng), 0);
    H2onlyPolicy policy(1);
    const std::vector<int32_t> all = BruteCandidates(head, 0);
    const int32_t expected = BruteArgMin(head, all, [&](int32_t s) { return head.score[s]; });
    ASSERT_EQ(policy.ChooseVictim(head.Meta()), expected) << "iter " << iter;
  }
}

TEST(Policies, TovaVictimIsBruteForceArgminOfStepAttention) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 5000; ++iter) {
    const Head head = RandomHead(rng, DrawSize(rng), 0);
    TovaPolicy policy(1);
    const std::vector<int32_t> all = BruteCandidates(head, 0);
    const int32_t expected = BruteArgMin(head, all, [&](int32_t s) { return head.step[s]; });
    ASSERT_EQ(policy.ChooseVictim(head.Meta()), expected) << "iter " << iter;
  }
}

TEST(Policies, LocalAndSinkEvictTheLowestAllowedPosition) {
  std::mt19937_64 rng(4);
  for (int iter = 0; iter < 3000; ++iter) {
    const int32_t n = DrawSize(rng) + 1;
    const Head head = RandomHead(rng, n, 0);
    const std::vector<int32_t> all = BruteCandidates(head, 0);
    const auto by_pos = [&](int32_t s) { return head.pos[s]; };
    ASSERT_EQ(LocalPolicy(n - 1).ChooseVictim(head.Meta()), BruteArgMin(head, all, by_pos));

    // Sinks: choose `sinks` so that at least one present position is >= it.
    int32_t highest = -1;
    for (int32_t p : head.pos) highest = std::max(highest, p);
    const int32_t sinks = static_cast<int32_t>(rng() % (highest + 1));
    std::vector<int32_t> non_sinks;
    for (int32_t s : all) {
      if (head.pos[s] >= sinks) non_sinks.push_back(s);
    }
    ASSERT_EQ(SinkPolicy(sinks, 1).ChooseVictim(head.Meta()), BruteArgMin(head, non_sinks, by_pos))
        << "iter " << iter << " sinks " << sinks;
  }
}

// The documented draw, rewritten from its description in policies.h.
int32_t DocumentedRandomVictim(std::mt19937_64& rng, const Head& head, int32_t recent) {
  const std::vector<int32_t> candidates = BruteCandidates(head, recent);  // slot order
  const uint64_t n = candidates.size();
  const uint64_t two64_mod_n = static_cast<uint64_t>(
      ((static_cast<unsigned __int128>(1) << 64) % n));
  uint64_t r;
  do {
    r = rng();
  } while (r < two64_mod_n);
  return candidates[r % n];
}

TEST(Policies, RandomFollowsTheDocumentedDrawAndNeverTouchesTheWindow) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 2000; ++iter) {
    const int32_t n = DrawSize(rng) + 1;
    const int32_t recent = DrawRecent(rng, n);
    const Head head = RandomHead(rng, n, iter % 2 == 0 ? recent : 0);
    const uint64_t seed = rng();
    RandomPolicy p(1, recent, seed);
    std::mt19937_64 reference(seed);
    const std::vector<int32_t> candidates = BruteCandidates(head, recent);
    for (int draw = 0; draw < 3; ++draw) {
      const int32_t victim = p.ChooseVictim(head.Meta());
      ASSERT_TRUE(std::find(candidates.begin(), candidates.end(), victim) != candidates.end());
      ASSERT_EQ(victim, DocumentedRandomVictim(reference, head, recent)) << "iter " << iter;
    }
  }
}

TEST(Policies, RandomSameSeedSameVictimsDifferentSeedDiffers) {
  std::mt19937_64 rng(6);
  const Head head = RandomHead(rng, 30, 5);
  RandomPolicy a(10, 5, 7), b(10, 5, 7), c(10, 5, 8);
  std::vector<int32_t> va, vb, vc;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.ChooseVictim(head.Meta()));
    vb.push_back(b.ChooseVictim(head.Meta()));
    vc.push_back(c.ChooseVictim(head.Meta()));
  }
  EXPECT_EQ(va, vb);
  // 25 candidates, 100 draws: equal sequences by chance have probability 25^-100.
  EXPECT_NE(va, vc);
}

TEST(Policies, RandomIsUniformOverCandidates) {
  // 13 candidates (40 present, recent 27), N = 26000 draws, expected E =
  // 2000 each. X^2 = sum (O - E)^2 / E is ~chi-square with 12 degrees of
  // freedom: mean 12, sd sqrt(24) ~= 4.9. The bound 12 + 10 sd ~= 61 is
  // exceeded by a uniform draw with probability < 1e-9, while a draw biased
  // by even 10% on one candidate adds ~ (200)^2 / 2000 = 20 and a plain
  // "first candidate" or "lowest position" rule adds ~ 300000.
  std::mt19937_64 rng(7);
  const int32_t recent = 27;
  const Head head = RandomHead(rng, 40, recent);
  const std::vector<int32_t> candidates = BruteCandidates(head, recent);
  ASSERT_EQ(candidates.size(), 13u);
  RandomPolicy policy(13, recent, 12345);
  std::map<int32_t, int64_t> hits;
  const int64_t n_draws = 26000;
  for (int64_t i = 0; i < n_draws; ++i) ++hits[policy.ChooseVictim(head.Meta())];
  ASSERT_EQ(hits.size(), candidates.size());
  double chi2 = 0;
  const double expected = static_cast<double>(n_draws) / candidates.size();
  for (int32_t s : candidates) {
    const double d = static_cast<double>(hits[s]) - expected;
    chi2 += d * d / expected;
  }
  EXPECT_LT(chi2, 61.0);
}

TEST(Policies, Mt19937_64IsTheStandardEngine) {
  // [rand.predef]: the 10000th invocation of a default-constructed
  // std::mt19937_64 produces 9981545732273789042. The random policy's
  // reproducibility across standard libraries rests on this.
  std::mt19937_64 rng;
  rng.discard(9999);
  EXPECT_EQ(rng(), 9981545732273789042ull);
}

}  // namespace
}  // namespace h2o
