// Policies driven through a real KvCache: tokens arrive in chunks with
// random K/V, attention is simulated by adding random scores (or writing
// random step attention), and after every EvictOverBudget the kept set is
// compared with a plain simulation that keeps a std::vector of tokens and
// erases the victim of DESIGN.md section 3 directly. Every kept token's K and
// V rows are checked too: chunks appended to a full head go through the
// shared spill area and are moved into freed slots by the eviction.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
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

constexpr int32_t kLayers = 2;
constexpr int32_t kHeads = 2;
constexpr int32_t kHeadDim = 4;
constexpr int32_t kMaxChunk = 4;

struct SimToken {
  int32_t pos;
  double score;  // accumulated (h2o, h2only) or this step's attention (tova)
};

// The section-3 rule on a plain token list: candidates are all tokens but
// the `recent` highest positions; the victim has the smallest score, ties to
// the lowest position. With score=mean the score is divided by the number of
// queries since the token arrived (positions pos..newest, the newest
// token's position, which is present on entry: it was just appended).
void SimEvict(std::vector<SimToken>& tokens, int32_t budget, int32_t recent,
              H2oScore::Kind kind = H2oScore::Kind::kSum) {
  int32_t newest = 0;
  for (const SimToken& t : tokens) newest = std::max(newest, t.pos);
  const auto key = [&](const SimToken& t) {
    if (kind != H2oScore::Kind::kMean) return t.score;
    return t.score / (newest - t.pos + 1);
  };
  while (static_cast<int32_t>(tokens.size()) > budget) {
    std::vector<SimToken> by_pos = tokens;
    std::sort(by_pos.begin(), by_pos.end(),
              [](const SimToken& a, const SimToken& b) { return a.pos < b.pos; });
    by_pos.resize(by_pos.size() - recent);  // drop the window
    const SimToken victim = *std::min_element(
        by_pos.begin(), by_pos.end(), [&](const SimToken& a, const SimToken& b) {
          return key(a) < key(b) || (key(a) == key(b) && a.pos < b.pos);
        });
    tokens.erase(std::find_if(tokens.begin(), tokens.end(),
                              [&](const SimToken& t) { return t.pos == victim.pos; }));
  }
}

int32_t SlotOf(const KvCache& cache, int32_t l, int32_t h, int32_t pos) {
  const KvHeadView view = cache.View(l, h);
  for (int32_t s = 0; s < view.n_slots; ++s) {
    if (view.pos[s] == pos) return s;
  }
  return -1;
}

enum class Signal { kNone, kAccumulate, kStep };

// Runs n_tokens through a cache with `policy`; checks count and window at
// every step, and (when `recent_for_sim` >= 0) the exact kept set against
// SimEvict, which then also drives the scores. `sinks` > 0 also checks that positions 0..sinks-1 stay.
// `score`: h2o's variant the simulation follows (ema: every token appended
// first multiplies the head's scores by the decay). `pinned` > 0: the
// cache pins positions 0..pinned-1 on top of the policy's budget
// (KvCacheConfig::n_keep); they must all stay, and the policy must keep of
// the rest exactly what it keeps of them alone.
void Simulate(std::unique_ptr<EvictionPolicy> policy, Signal signal, int32_t recent,
              int32_t recent_for_sim, int32_t sinks, int32_t n_tokens, uint64_t seed,
              H2oScore score = {}, int32_t pinned = 0) {
  const int32_t budget = policy->budget();
  const int32_t held = budget + pinned;
  const std::string name = policy->name();
  KvCacheConfig config;
  config.n_layer = kLayers;
  config.n_head_kv = kHeads;
  config.head_dim = kHeadDim;
  config.budget = held;
  config.capacity = held + kMaxChunk;
  config.n_keep = pinned;
  config.types = {TensorType::kF16, TensorType::kF16};
  KvCache cache(config, std::move(policy));
  std::mt19937_64 rng(seed);
  // Multiples of 1/64 in [-1, 1]: exact in f16, so rows compare exactly.
  auto value = [&rng] { return static_cast<float>(static_cast<int>(rng() % 129) - 64) / 64.0f; };
  std::vector<std::vector<SimToken>> sim(kLayers * kHeads);
  using KvRows = std::array<float, 2 * kHeadDim>;
  std::map<std::tuple<int32_t, int32_t, int32_t>, KvRows> rows;  // (l, h, pos) -> K, V
  int32_t pos = 0;
  while (pos < n_tokens) {
    const int32_t chunk = std::min<int32_t>(1 + static_cast<int32_t>(rng() % kMaxChunk),
                                            n_tokens - pos);
    for (int32_t l = 0; l < kLayers; ++l) {
      for (int32_t h = 0; h < kHeads; ++h) {
        auto& tokens = sim[l * kHeads + h];
        for (int32_t t = pos; t < pos + chunk; ++t) {
          KvRows& kv = rows[{l, h, t}];
          for (float& x : kv) x = value();
          cache.Append(l, h, t, kv.data(), kv.data() + kHeadDim);
          if (score.kind == H2oScore::Kind::kEma) {
            for (SimToken& token : tokens) token.score *= score.decay;
          }
          if (recent_for_sim >= 0 && t >= pinned) tokens.push_back({t, 0.0});
        }
        // "Attention": multiples of 1/4 keep every sum exact and ties common.
        for (SimToken& token : tokens) {
          const double x = 0.25 * static_cast<double>(rng() % 4);
          const int32_t slot = SlotOf(cache, l, h, token.pos);
          ASSERT_GE(slot, 0);
          if (signal == Signal::kAccumulate) {
            token.score += x;
            cache.scores(l, h)[slot] += x;
          } else if (signal == Signal::kStep) {
            token.score = x;
            cache.step_attention(l, h)[slot] = static_cast<float>(x);
          }
        }
        if (recent_for_sim >= 0) SimEvict(tokens, budget, recent_for_sim, score.kind);
      }
      cache.EvictOverBudget(l);
      for (int32_t h = 0; h < kHeads; ++h) {
        const std::vector<int32_t> kept = KeptPositions(cache, l, h);
        const int32_t end = pos + chunk;
        ASSERT_EQ(cache.count(l, h), std::min(end, held)) << name << " pos " << end;
        ASSERT_EQ(static_cast<int32_t>(kept.size()), std::min(end, held));
        for (int32_t p = 0; p < std::min(pinned, end); ++p) {
          ASSERT_TRUE(std::binary_search(kept.begin(), kept.end(), p))
              << name << ": pinned position " << p << " evicted at " << end;
        }
        for (int32_t p = std::max(0, end - recent); p < end; ++p) {
          ASSERT_TRUE(std::binary_search(kept.begin(), kept.end(), p))
              << name << ": recent position " << p << " evicted at " << end;
        }
        for (int32_t p = 0; p < std::min(sinks, end); ++p) {
          ASSERT_TRUE(std::binary_search(kept.begin(), kept.end(), p))
              << name << ": sink " << p << " evicted at " << end;
        }
        const KvHeadView view = cache.View(l, h);
        ASSERT_LE(view.n_slots, held) << "spilled tokens left after eviction";
        for (int32_t p : kept) {
          const int32_t slot = SlotOf(cache, l, h, p);
          const KvRows& want = rows[{l, h, p}];
          const auto* k = static_cast<const uint16_t*>(view.KRow(slot));
          const auto* v = static_cast<const uint16_t*>(view.VRow(slot));
          for (int32_t i = 0; i < kHeadDim; ++i) {
            ASSERT_EQ(kernels::F16ToF32(k[i]), want[i]) << name << " pos " << p;
            ASSERT_EQ(kernels::F16ToF32(v[i]), want[kHeadDim + i]) << name << " pos " << p;
          }
        }
        if (recent_for_sim >= 0) {
          std::vector<int32_t> expected;
          for (int32_t p = 0; p < std::min(pinned, end); ++p) expected.push_back(p);
          for (const SimToken& t : sim[l * kHeads + h]) expected.push_back(t.pos);
          std::sort(expected.begin(), expected.end());
          ASSERT_EQ(kept, expected) << name << " layer " << l << " head " << h << " at " << end;
        }
      }
    }
    pos += chunk;
  }
}

TEST(PolicyCache, H2oKeepsWhatThePlainSimulationKeeps) {
  Simulate(std::make_unique<H2oPolicy>(6, 5), Signal::kAccumulate, 5, 5, 0, 600, 1);
  Simulate(std::make_unique<H2oPolicy>(1, 9), Signal::kAccumulate, 9, 9, 0, 300, 2);
  Simulate(std::make_unique<H2oPolicy>(8, 0), Signal::kAccumulate, 0, 0, 0, 300, 3);
  Simulate(std::make_unique<H2oPolicy>(0, 3), Signal::kAccumulate, 3, 3, 0, 300, 4);
}

TEST(PolicyCache, H2oMeanKeepsWhatThePlainSimulationKeeps) {
  const H2oScore mean = H2oScore::Mean();
  Simulate(std::make_unique<H2oPolicy>(6, 5, mean), Signal::kAccumulate, 5, 5, 0, 600, 21, mean);
  Simulate(std::make_unique<H2oPolicy>(8, 0, mean), Signal::kAccumulate, 0, 0, 0, 300, 22, mean);
  Simulate(std::make_unique<H2oPolicy>(1, 9, mean), Signal::kAccumulate, 9, 9, 0, 300, 23, mean);
}

TEST(PolicyCache, H2oEmaKeepsWhatThePlainSimulationKeeps) {
  // 0.5 keeps the quarter-multiples exact for a while; 0.9 exercises the
  // rounding, which the simulation repeats operation for operation.
  for (const double decay : {0.5, 0.9}) {
    const H2oScore ema = H2oScore::Ema(decay);
    Simulate(std::make_unique<H2oPolicy>(6, 5, ema), Signal::kAccumulate, 5, 5, 0, 600, 24, ema);
    Simulate(std::make_unique<H2oPolicy>(8, 0, ema), Signal::kAccumulate, 0, 0, 0, 300, 25, ema);
  }
}

TEST(PolicyCache, EmaScoresAreTheDecayedSum) {
  // One head, one token at a time: after token T the score of the token at
  // p is sum over t in [p, T] of decay^(T - t) * a_t, a_t added after
  // token t's append.
  KvCacheConfig config;
  config.n_layer = 1;
  config.n_head_kv = 1;
  config.head_dim = kHeadDim;
  config.budget = 8;
  config.capacity = 9;
  const double decay = 0.5;
  KvCache cache(config, std::make_unique<H2oPolicy>(4, 4, H2oScore::Ema(decay)));
  const std::array<float, kHeadDim> row{};
  std::vector<double> expected;
  for (int32_t t = 0; t < 4; ++t) {
    cache.Append(0, 0, t, row.data(), row.data());
    for (double& e : expected) e *= decay;
    expected.push_back(0.0);
    for (int32_t p = 0; p <= t; ++p) {
      cache.scores(0, 0)[SlotOf(cache, 0, 0, p)] += 1.0 + p;
      expected[p] += 1.0 + p;
    }
  }
  for (int32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(cache.scores(0, 0)[SlotOf(cache, 0, 0, p)], expected[p]) << p;
  }
  // Token 0 got 1 from each of the 4 queries: 1 + 0.5 + 0.25 + 0.125.
  EXPECT_EQ(expected[0], 1.875);
}

TEST(PolicyCache, H2onlyKeepsWhatThePlainSimulationKeeps) {
  Simulate(std::make_unique<H2onlyPolicy>(7), Signal::kAccumulate, 0, 0, 0, 600, 5);
}

TEST(PolicyCache, TovaKeepsWhatThePlainSimulationKeeps) {
  Simulate(std::make_unique<TovaPolicy>(7), Signal::kStep, 0, 0, 0, 600, 6);
}

TEST(PolicyCache, LocalKeepsExactlyTheLastRecent) {
  // All scores equal: the simulation then evicts the lowest position, which
  // is the local rule; the window check covers every kept token.
  Simulate(std::make_unique<LocalPolicy>(9), Signal::kNone, 9, 9, 0, 500, 7);
}

TEST(PolicyCache, SinksAreNeverEvicted) {
  // Kept = the sinks plus the last `recent`; checked exactly at every step.
  Simulate(std::make_unique<SinkPolicy>(4, 13), Signal::kNone, 13, -1, 4, 3000, 8);
  Simulate(std::make_unique<SinkPolicy>(1, 2), Signal::kNone, 2, -1, 1, 1000, 9);
}

TEST(PolicyCache, RandomKeepsTheWindowAndTheBudget) {
  Simulate(std::make_unique<RandomPolicy>(6, 5, 99), Signal::kNone, 5, -1, 0, 1000, 10);
  Simulate(std::make_unique<RandomPolicy>(6, 0, 3), Signal::kNone, 0, -1, 0, 300, 11);
}

// Pinned tokens (--kv-keep) under every policy: the first tokens stay in
// every head, on top of the budget, and the policy keeps of the rest what
// the plain simulation keeps of them alone (sink's sinks are then the first
// tokens after the pinned ones).
TEST(PolicyCache, PinnedTokensStayAndThePolicyGovernsTheRest) {
  Simulate(std::make_unique<H2oPolicy>(6, 5), Signal::kAccumulate, 5, 5, 0, 600, 31, {}, 3);
  Simulate(std::make_unique<H2oPolicy>(1, 9), Signal::kAccumulate, 9, 9, 0, 300, 32, {}, 7);
  Simulate(std::make_unique<H2onlyPolicy>(7), Signal::kAccumulate, 0, 0, 0, 400, 33, {}, 2);
  Simulate(std::make_unique<TovaPolicy>(7), Signal::kStep, 0, 0, 0, 400, 34, {}, 4);
  Simulate(std::make_unique<LocalPolicy>(9), Signal::kNone, 9, 9, 0, 300, 35, {}, 5);
  Simulate(std::make_unique<SinkPolicy>(2, 6), Signal::kNone, 6, -1, 0, 300, 36, {}, 3);
  Simulate(std::make_unique<RandomPolicy>(6, 5, 7), Signal::kNone, 5, -1, 0, 300, 37, {}, 4);
}

}  // namespace
}  // namespace h2o
