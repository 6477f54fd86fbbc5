#include "runtime/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace h2o {
namespace {

std::vector<float> LogitsOf(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

std::vector<double> Frequencies(Sampler& s, const std::vector<float>& logits, int n) {
  std::vector<double> f(logits.size(), 0.0);
  for (int i = 0; i < n; ++i) f[s.Sample(logits)] += 1.0 / n;
  return f;
}

TEST(ArgMax, LowestIndexWinsTies) {
  const std::vector<float> v = {1.0f, 3.0f, -2.0f, 3.0f};
  EXPECT_EQ(ArgMax(v), 1);
}

// Against the plain scan (first index of the largest value, NaN never
// wins) at every length around the 16-lane blocks, with ties placed in
// the tail, in a lane other than the first and across blocks.
TEST(ArgMax, EqualsAPlainScanAtEveryLength) {
  auto scan = [](const std::vector<float>& v) {
    int32_t best = 0;
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] > v[best]) best = static_cast<int32_t>(i);
    }
    return best;
  };
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-3, 3);
  for (size_t n = 1; n <= 70; ++n) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(small(rng));  // many ties
      if (trial % 4 == 1) v[rng() % n] = std::numeric_limits<float>::quiet_NaN();
      if (trial % 4 == 2) std::fill(v.begin(), v.end(), -std::numeric_limits<float>::infinity());
      if (trial % 4 == 3 && n > 1) v[n - 1] = 9.0f;  // the tail past the last block
      if (std::isnan(v[0])) v[0] = 0.0f;  // the scan's start is not NaN
      EXPECT_EQ(ArgMax(v), scan(v)) << "n " << n << " trial " << trial;
    }
  }
}

TEST(Sampler, ZeroTemperatureIsGreedy) {
  Sampler s({.temperature = 0.0f, .top_k = 0, .top_p = 1.0f, .seed = 1});
  const std::vector<float> v = {0.1f, 2.0f, 1.9f};
  for (int i = 0; i < 100; ++i) EXPECT_EQ(s.Sample(v), 1);
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  const auto logits = LogitsOf({0.2, 0.5, 0.3});
  Sampler k1({.temperature = 1.0f, .top_k = 1, .top_p = 1.0f, .seed = 3});
  Sampler p0({.temperature = 1.0f, .top_k = 0, .top_p = 1e-6f, .seed = 3});
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(k1.Sample(logits), 1);
    EXPECT_EQ(p0.Sample(logits), 1);
  }
}

// Frequencies over 20000 draws: standard error <= 0.0036, bound 0.02.
TEST(Sampler, TemperatureOneFollowsTheSoftmax) {
  Sampler s({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 42});
  const auto f = Frequencies(s, LogitsOf({0.5, 0.3, 0.2}), 20000);
  EXPECT_NEAR(f[0], 0.5, 0.02);
  EXPECT_NEAR(f[1], 0.3, 0.02);
  EXPECT_NEAR(f[2], 0.2, 0.02);
}

TEST(Sampler, TemperatureSharpens) {
  // At T = 0.5 probabilities go as p^2: 0.25, 0.09, 0.04 -> /0.38.
  Sampler s({.temperature = 0.5f, .top_k = 0, .top_p = 1.0f, .seed = 5});
  const auto f = Frequencies(s, LogitsOf({0.5, 0.3, 0.2}), 20000);
  EXPECT_NEAR(f[0], 0.25 / 0.38, 0.02);
  EXPECT_NEAR(f[1], 0.09 / 0.38, 0.02);
  EXPECT_NEAR(f[2], 0.04 / 0.38, 0.02);
}

TEST(Sampler, TopKRenormalizesOverTheKept) {
  Sampler s({.temperature = 1.0f, .top_k = 2, .top_p = 1.0f, .seed = 9});
  const auto f = Frequencies(s, LogitsOf({0.5, 0.3, 0.2}), 20000);
  EXPECT_NEAR(f[0], 0.625, 0.02);
  EXPECT_NEAR(f[1], 0.375, 0.02);
  EXPECT_EQ(f[2], 0.0);
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  // Sorted 0.5, 0.3, 0.2: the prefix {0.5, 0.3} is the first to reach 0.7.
  Sampler s({.temperature = 1.0f, .top_k = 0, .top_p = 0.7f, .seed = 11});
  const auto f = Frequencies(s, LogitsOf({0.2, 0.5, 0.3}), 20000);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_NEAR(f[1], 0.625, 0.02);
  EXPECT_NEAR(f[2], 0.375, 0.02);
}

TEST(Sampler, SameSeedSameSequence) {
  const auto logits = LogitsOf({0.1, 0.2, 0.3, 0.4});
  Sampler a({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 123});
  Sampler b({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 123});
  Sampler c({.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 124});
  std::vector<int> sa, sb, sc;
  for (int i = 0; i < 64; ++i) {
    sa.push_back(a.Sample(logits));
    sb.push_back(b.Sample(logits));
    sc.push_back(c.Sample(logits));
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

}  // namespace
}  // namespace h2o

namespace h2o {
namespace {

SamplerOptions Greedy() {
  SamplerOptions o;
  o.temperature = 0.0f;
  return o;
}

// llama.cpp's rule, worked by hand: token 0's logit 2.0 > 0 becomes 2.0 /
// 2 = 1.0, token 2's -1.0 becomes -2.0; token 1 (1.5) then wins greedy.
TEST(RepeatPenalty, DividesPositiveAndMultipliesNegativeLogitsOfRecentTokens) {
  SamplerOptions o = Greedy();
  o.repeat_penalty = 2.0f;
  Sampler s(o);
  const std::vector<float> logits = {2.0f, 1.5f, -1.0f};
  EXPECT_EQ(s.Sample(logits), 0);  // nothing accepted yet
  s.Accept(0);
  EXPECT_EQ(s.Sample(logits), 1);
}

TEST(RepeatPenalty, OncePerDistinctTokenAndOnlyWithinTheWindow) {
  SamplerOptions o = Greedy();
  o.repeat_penalty = 2.0f;
  o.repeat_last_n = 2;
  Sampler s(o);
  // Applied twice, 4.0 would drop below 1.5; once it stays 2.0 and wins.
  const std::vector<float> logits = {4.0f, 1.5f};
  s.Accept(0);
  s.Accept(0);
  EXPECT_EQ(s.Sample(logits), 0);
  // A window of 2: after two other tokens, 0 is no longer penalized.
  const std::vector<float> three = {2.0f, 1.9f, 1.8f};
  EXPECT_EQ(s.Sample(three), 1);  // 0 is penalized to 1.0
  s.Accept(2);
  s.Accept(2);
  EXPECT_EQ(s.Sample(three), 0);
}

TEST(RepeatPenalty, OneIsOff) {
  SamplerOptions o = Greedy();
  Sampler s(o);
  s.Accept(0);
  EXPECT_EQ(s.Sample(std::vector<float>{2.0f, 1.5f}), 0);
}

// Only min-p 0.5 cuts: no top-k, no top-p.
SamplerOptions MinPHalf(float temperature, uint64_t seed) {
  SamplerOptions o;
  o.temperature = temperature;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.min_p = 0.5f;
  o.seed = seed;
  return o;
}

// p = {0.5, 0.3, 0.2}: min_p 0.5 keeps tokens with p >= 0.25 (0 and 1),
// renormalized to 5/8 and 3/8; token 2 is never drawn.
TEST(MinP, KeepsTokensAtLeastMinPTimesTheMostLikely) {
  Sampler s(MinPHalf(1.0f, 7));
  const std::vector<double> f = Frequencies(s, LogitsOf({0.5, 0.3, 0.2}), 20000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[0], 5.0 / 8.0, 0.015);
  EXPECT_NEAR(f[1], 3.0 / 8.0, 0.015);
}

// Before temperature (llama.cpp's order): a high temperature flattens the
// draw but does not let token 2 back in.
TEST(MinP, CutsOnTheUntemperedProbabilities) {
  Sampler s(MinPHalf(5.0f, 3));
  const std::vector<double> f = Frequencies(s, LogitsOf({0.5, 0.3, 0.2}), 5000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.4);  // 0.3^(1/5) / (0.5^(1/5) + 0.3^(1/5)) = 0.475
}

// OpenAI's penalties, worked by hand: token 0 (3.0) accepted twice loses
// 2 x frequency + presence.
TEST(Penalties, FrequencyPerOccurrenceAndPresenceOnce) {
  const std::vector<float> logits = {3.0f, 2.5f, 0.0f};
  SamplerOptions o = Greedy();
  o.frequency_penalty = 0.2f;
  o.presence_penalty = 0.2f;  // 3.0 - 0.4 - 0.2 = 2.4 < 2.5
  Sampler a(o);
  a.Accept(0);
  a.Accept(0);
  EXPECT_EQ(a.Sample(logits), 1);
  o.frequency_penalty = 0.1f;  // 3.0 - 0.2 - 0.2 = 2.6 > 2.5
  Sampler b(o);
  b.Accept(0);
  b.Accept(0);
  EXPECT_EQ(b.Sample(logits), 0);
  o.frequency_penalty = 0.0f;
  o.presence_penalty = 0.0f;
  Sampler off(o);
  off.Accept(1);
  EXPECT_EQ(off.Sample(logits), 0);
}

// A bias is added before anything else: greedy follows it, and -inf bans.
TEST(LogitBias, ShiftsGreedyAndBans) {
  SamplerOptions o = Greedy();
  o.logit_bias = {{1, 1.0f}};
  EXPECT_EQ(Sampler(o).Sample(std::vector<float>{2.0f, 1.5f}), 1);
  SamplerOptions t;
  t.temperature = 1.0f;
  t.top_k = 0;
  t.top_p = 1.0f;
  t.seed = 5;
  t.logit_bias = {{0, -std::numeric_limits<float>::infinity()}};
  Sampler s(t);
  const std::vector<double> f = Frequencies(s, LogitsOf({0.5, 0.3, 0.2}), 5000);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_NEAR(f[1], 0.6, 0.03);
}

// p = {0.6, 0.3, 0.1}, top-p 0.85: the untempered probabilities reach it
// with tokens 0 and 1, so at temperature 5 token 2 is still never drawn
// (tempered first, 0.389 + 0.339 < 0.85 would let it in).
TEST(TopP, CutsOnTheUntemperedProbabilities) {
  SamplerOptions o;
  o.temperature = 5.0f;
  o.top_k = 0;
  o.top_p = 0.85f;
  o.seed = 8;
  Sampler s(o);
  const std::vector<double> f = Frequencies(s, LogitsOf({0.6, 0.3, 0.1}), 5000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_GT(f[1], 0.4);
}

// p = {0.5, 0.3, 0.2}: entropy 1.0297 nats; surprisals 0.693, 1.204,
// 1.609 are 0.337, 0.174, 0.580 from it. typical-p 0.5 keeps token 1
// (0.3), then token 0 (0.8): token 2 is never drawn; 0.25 keeps token 1
// alone, the most typical, not the most likely.
TEST(Typical, KeepsTheTokensNearestTheEntropy) {
  SamplerOptions o;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.typical_p = 0.5f;
  o.seed = 4;
  Sampler half(o);
  std::vector<double> f = Frequencies(half, LogitsOf({0.5, 0.3, 0.2}), 8000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[0], 0.625, 0.02);
  o.typical_p = 0.25f;
  Sampler quarter(o);
  f = Frequencies(quarter, LogitsOf({0.5, 0.3, 0.2}), 500);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[2], 0.0);
}

}  // namespace
}  // namespace h2o
