// The Figure-2 statistics on hand-built inputs with hand-worked answers.
#include "analysis/attention_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace h2o {
namespace {

TEST(AttentionStats, SparsityCountsOnlyUnmaskedEntriesBelowTheThreshold) {
  // Slot 4 is empty, slot 5 is after the query: both masked. Max 0.5, so
  // the threshold is 0.005: only 0.004 is below it.
  const std::vector<int32_t> pos = {0, 1, 2, 3, -1, 5};
  const std::vector<float> probs = {0.5f, 0.004f, 0.006f, 0.49f, 0.9f, 0.7f};
  const RowSparsity row = CountSparseEntries(pos, probs, /*query_pos=*/3, 0.01);
  EXPECT_EQ(row.entries, 4);
  EXPECT_EQ(row.below, 1);
  EXPECT_DOUBLE_EQ(row.fraction(), 0.25);
}

TEST(AttentionStats, SparsityOfAUniformRowIsZeroAndOfAOneHotRowAllButOne) {
  const std::vector<int32_t> pos = {0, 1, 2, 3};
  const std::vector<float> uniform = {0.25f, 0.25f, 0.25f, 0.25f};
  EXPECT_EQ(CountSparseEntries(pos, uniform, 3, 0.01).below, 0);
  const std::vector<float> one_hot = {0.0f, 1.0f, 0.0f, 0.0f};
  EXPECT_DOUBLE_EQ(CountSparseEntries(pos, one_hot, 3, 0.01).fraction(), 0.75);
  // A single-entry row (the first query) is never sparse.
  EXPECT_DOUBLE_EQ(CountSparseEntries(pos, one_hot, 0, 0.01).fraction(), 0.0);
}

TEST(AttentionStats, PowerLawFitRecoversAnExactPowerLaw) {
  for (double alpha : {0.5, 1.0, 1.7}) {
    std::vector<double> scores;
    for (int r = 1; r <= 60; ++r) scores.push_back(3.0 * std::pow(r, -alpha));
    const PowerLawFit fit = FitPowerLaw(scores);
    EXPECT_NEAR(fit.alpha, alpha, 1e-12);
    EXPECT_NEAR(fit.log_c, std::log(3.0), 1e-12);
    EXPECT_NEAR(fit.r_squared, 1.0, 1e-12);
    EXPECT_EQ(fit.n_points, 60);
  }
}

TEST(AttentionStats, PowerLawFitUsesOnlyThePositivePrefix) {
  // Ranks 1 and 2 (scores 4 and 1): slope ln(1/4) / ln(2) = -2 exactly;
  // the zeros are left out, or the log would be -inf.
  const std::vector<double> scores = {4.0, 1.0, 0.0, 0.0};
  const PowerLawFit fit = FitPowerLaw(scores);
  EXPECT_EQ(fit.n_points, 2);
  EXPECT_NEAR(fit.alpha, 2.0, 1e-12);
  EXPECT_NEAR(fit.log_c, std::log(4.0), 1e-12);
}

TEST(AttentionStats, PowerLawFitIgnoresNoiseOrthogonalToTheLineInItsWeights) {
  // Rank r weighs w_r = ln((r+1)/r). ln(score) = ln c - alpha ln r + d * e_r,
  // where e = w x (w * ln r) (a cross product) satisfies sum w e = 0 and
  // sum w e ln r = 0: orthogonal to both regressors in the weighted inner
  // product, so weighted least squares returns alpha and ln c exactly, and
  // the weighted residual is d^2 sum w e^2: r^2 = 1 - d^2 sum w e^2 /
  // (d^2 sum w e^2 + alpha^2 sxx), sxx = sum w (ln r - mean ln r)^2.
  const double alpha = 1.2, c = 7.0, d = 3.0;  // e is small: d makes the noise count
  double w[3], x[3];
  for (int r = 1; r <= 3; ++r) {
    w[r - 1] = std::log((r + 1.0) / r);
    x[r - 1] = std::log(r);
  }
  const double wx[3] = {w[0] * x[0], w[1] * x[1], w[2] * x[2]};
  const double e[3] = {w[1] * wx[2] - w[2] * wx[1], w[2] * wx[0] - w[0] * wx[2],
                       w[0] * wx[1] - w[1] * wx[0]};
  std::vector<double> scores;
  for (int r = 1; r <= 3; ++r) scores.push_back(c * std::pow(r, -alpha) * std::exp(d * e[r - 1]));
  const double mean_x = (wx[0] + wx[1] + wx[2]) / (w[0] + w[1] + w[2]);
  double sxx = 0.0, wee = 0.0;
  for (int i = 0; i < 3; ++i) {
    sxx += w[i] * (x[i] - mean_x) * (x[i] - mean_x);
    wee += w[i] * e[i] * e[i];
  }
  const PowerLawFit fit = FitPowerLaw(scores);
  EXPECT_NEAR(fit.alpha, alpha, 1e-12);
  EXPECT_NEAR(fit.log_c, std::log(c), 1e-12);
  EXPECT_NEAR(fit.r_squared, 1.0 - d * d * wee / (d * d * wee + alpha * alpha * sxx), 1e-12);
  EXPECT_LT(fit.r_squared, 0.99);
}

TEST(AttentionStats, PowerLawFitOfTheHeadLeavesTheFallingTailOut) {
  // A power law over ranks 1..100, then a tail that falls off faster (as
  // late tokens' accumulated attention does): a fit of the head recovers
  // the law; a fit of every rank does not.
  std::vector<double> scores;
  for (int r = 1; r <= 100; ++r) scores.push_back(5.0 * std::pow(r, -0.4));
  for (int r = 101; r <= 200; ++r) scores.push_back(scores.back() * 0.9);
  const PowerLawFit head = FitPowerLaw(scores, 100);
  EXPECT_EQ(head.n_points, 100);
  EXPECT_NEAR(head.alpha, 0.4, 1e-12);
  EXPECT_NEAR(head.log_c, std::log(5.0), 1e-12);
  const PowerLawFit all = FitPowerLaw(scores);
  EXPECT_EQ(all.n_points, 200);
  EXPECT_GT(all.alpha, 0.6);
  EXPECT_LT(all.r_squared, 0.95);
}

TEST(AttentionStats, PowerLawFitWeighsLogRankEvenly) {
  // Two exact laws joined at rank 10: ranks 1..10 fall as r^-1, ranks
  // 11..100 are flat at rank 10's score. Weighted by log width, the head
  // (ln 10 of log rank) and the tail (ln 10 too) pull equally, so the
  // exponent lies between the two halves' (1 and 0), well above what an
  // unweighted fit gives, where 90 tail points drag it toward 0.
  std::vector<double> scores;
  for (int r = 1; r <= 100; ++r) scores.push_back(r <= 10 ? 1.0 / r : 0.1);
  const PowerLawFit fit = FitPowerLaw(scores);
  EXPECT_GT(fit.alpha, 0.4);
  EXPECT_LT(fit.alpha, 0.7);
}

TEST(AttentionStats, PowerLawFitOfAConstantSeries) {
  const std::vector<double> constant = {2.0, 2.0, 2.0};
  const PowerLawFit fit = FitPowerLaw(constant);
  EXPECT_NEAR(fit.alpha, 0.0, 1e-15);
  EXPECT_NEAR(fit.log_c, std::log(2.0), 1e-15);
  EXPECT_DOUBLE_EQ(fit.r_squared, 1.0);
}

TEST(AttentionStats, PowerLawFitNeedsTwoPositiveRanks) {
  const std::vector<double> one = {5.0, 0.0};
  EXPECT_TRUE(std::isnan(FitPowerLaw(one).alpha));
  EXPECT_EQ(FitPowerLaw(one).n_points, 1);
  EXPECT_TRUE(std::isnan(FitPowerLaw(std::vector<double>{}).alpha));
}

TEST(AttentionStats, SortedDescending) {
  const std::vector<double> values = {0.2, 3.0, 0.0, 1.5};
  EXPECT_EQ(SortedDescending(values), (std::vector<double>{3.0, 1.5, 0.2, 0.0}));
}

TEST(AttentionStats, TopKPositionsBreaksTiesToTheLowerPosition) {
  const std::vector<double> scores = {0.1, 0.5, 0.5, 0.2, 0.9};
  EXPECT_EQ(TopKPositions(scores, 3), (std::vector<int32_t>{1, 2, 4}));
  EXPECT_EQ(TopKPositions(scores, 2), (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(TopKPositions(scores, 0), (std::vector<int32_t>{}));
  EXPECT_EQ(TopKPositions(scores, 9), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(AttentionStats, OverlapFraction) {
  EXPECT_DOUBLE_EQ(
      OverlapFraction(std::vector<int32_t>{1, 3, 5, 7}, std::vector<int32_t>{3, 4, 5, 6}), 0.5);
  EXPECT_DOUBLE_EQ(OverlapFraction(std::vector<int32_t>{1, 2}, std::vector<int32_t>{2, 3, 4}),
                   1.0 / 3.0);
  EXPECT_DOUBLE_EQ(OverlapFraction(std::vector<int32_t>{2, 9}, std::vector<int32_t>{2, 9}), 1.0);
  EXPECT_DOUBLE_EQ(OverlapFraction(std::vector<int32_t>{}, std::vector<int32_t>{}), 0.0);
}

}  // namespace
}  // namespace h2o
