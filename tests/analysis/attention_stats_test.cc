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

TEST(AttentionStats, PowerLawFitIgnoresNoiseOrthogonalToTheLine) {
  // ln(score) = ln c - alpha ln r + d * e, where e = (1,1,1) x (ln 1, ln 2,
  // ln 3) = (ln 1.5, -ln 3, ln 2) is orthogonal to both regressors, so least
  // squares returns alpha and ln c exactly, and the residual is d^2 |e|^2:
  // r^2 = 1 - d^2 |e|^2 / (d^2 |e|^2 + alpha^2 sxx).
  const double alpha = 1.2, c = 7.0, d = 0.3;
  const double e[3] = {std::log(1.5), -std::log(3.0), std::log(2.0)};
  std::vector<double> scores;
  for (int r = 1; r <= 3; ++r) scores.push_back(c * std::pow(r, -alpha) * std::exp(d * e[r - 1]));
  const double mean_x = (std::log(2.0) + std::log(3.0)) / 3.0;
  double sxx = 0.0, ee = 0.0;
  for (int r = 1; r <= 3; ++r) {
    sxx += (std::log(r) - mean_x) * (std::log(r) - mean_x);
    ee += e[r - 1] * e[r - 1];
  }
  const PowerLawFit fit = FitPowerLaw(scores);
  EXPECT_NEAR(fit.alpha, alpha, 1e-12);
  EXPECT_NEAR(fit.log_c, std::log(c), 1e-12);
  EXPECT_NEAR(fit.r_squared, 1.0 - d * d * ee / (d * d * ee + alpha * alpha * sxx), 1e-12);
  EXPECT_LT(fit.r_squared, 0.99);
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
