// RmsNorm, Softmax, SwiGlu and RoPE of every backend against
// double-precision formulas and hand-worked cases.
#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::RandomVector;

TEST(RmsNormTest, HandWorkedCase) {
  // mean(x^2) = (9 + 16) / 2 = 12.5, 1/sqrt(12.5) = sqrt(2)/5.
  const float x[2] = {3.0f, 4.0f};
  const float weight[2] = {1.0f, 2.0f};
  for (const KernelTable* table : AvailableKernels()) {
    float out[2];
    table->rms_norm(x, weight, out, 2, 0.0f);
    EXPECT_NEAR(out[0], 3 * std::sqrt(2.0) / 5, 4e-7) << table->name;
    EXPECT_NEAR(out[1], 8 * std::sqrt(2.0) / 5, 4e-7) << table->name;
    // eps keeps an all-zero vector finite.
    const float zeros[2] = {0.0f, 0.0f};
    table->rms_norm(zeros, weight, out, 2, 1e-5f);
    EXPECT_EQ(out[0], 0.0f) << table->name;
    EXPECT_EQ(out[1], 0.0f) << table->name;
  }
}

TEST(RmsNormTest, MatchesDoubleReferenceAndAllowsAliasing) {
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t n : {1, 7, 64, 1000, 4096}) {
      const std::vector<float> x = RandomVector(n, static_cast<uint32_t>(n), -3.0f, 3.0f);
      const std::vector<float> weight = RandomVector(n, static_cast<uint32_t>(n) + 1, 0.5f, 1.5f);
      const float eps = 1e-5f;
      double sum_sq = 0.0;
      for (float v : x) sum_sq += static_cast<double>(v) * v;
      const double scale = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps);
      // A float-accumulated sum of squares (8 lanes) is off by up to
      // (n/8 + 3) eps relative; the square root halves that; three
      // multiplies add three roundings.
      const double rel = FLT_EPSILON * (static_cast<double>(n) / 16 + 8);
      std::vector<float> out(n);
      table->rms_norm(x.data(), weight.data(), out.data(), n, eps);
      std::vector<float> in_place = x;
      table->rms_norm(in_place.data(), weight.data(), in_place.data(), n, eps);
      for (int64_t i = 0; i < n; ++i) {
        const double expected = x[i] * scale * weight[i];
        ASSERT_NEAR(out[i], expected, rel * std::fabs(expected))
            << "backend=" << table->name << " n=" << n << " i=" << i;
        ASSERT_EQ(in_place[i], out[i]) << "backend=" << table->name << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST(SoftmaxTest, HandWorkedCases) {
  for (const KernelTable* table : AvailableKernels()) {
    float one[1] = {-5.0f};
    table->softmax(one, 1);
    EXPECT_EQ(one[0], 1.0f) << table->name;

    float two[2] = {0.0f, static_cast<float>(std::log(3.0))};  // e^0 : e^ln3 = 1 : 3
    table->softmax(two, 2);
    EXPECT_NEAR(two[0], 0.25, 1e-7) << table->name;
    EXPECT_NEAR(two[1], 0.75, 1e-7) << table->name;

    // exp(1000) overflows float: only max subtraction gives the answer.
    float huge[2] = {1000.0f, 1000.0f};
    table->softmax(huge, 2);
    EXPECT_EQ(huge[0], 0.5f) << table->name;
    EXPECT_EQ(huge[1], 0.5f) << table->name;

    // Masked (-inf) entries get exactly zero weight.
    const float inf = std::numeric_limits<float>::infinity();
    float masked[3] = {1.0f, -inf, 1.0f};
    table->softmax(masked, 3);
    EXPECT_EQ(masked[0], 0.5f) << table->name;
    EXPECT_EQ(masked[1], 0.0f) << table->name;
    EXPECT_EQ(masked[2], 0.5f) << table->name;
  }
}

TEST(SoftmaxTest, MatchesDoubleReference) {
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t n : {1, 3, 17, 256, 4099}) {
      for (float offset : {0.0f, 100.0f}) {
        std::vector<float> x = RandomVector(n, static_cast<uint32_t>(n), -10.0f, 10.0f);
        for (float& v : x) v += offset;
        double max = x[0];
        for (float v : x) max = std::max(max, double{v});
        double sum = 0.0;
        for (float v : x) sum += std::exp(v - max);
        std::vector<float> got = x;
        table->softmax(got.data(), n);
        double total = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const double expected = std::exp(x[i] - max) / sum;
          // x - max rounds by up to |x - max| eps / 2 (relative error of
          // exp), expf adds a few ulp, a float normalizer (n/8 + 3) eps.
          const double rel = FLT_EPSILON * (std::fabs(x[i] - max) + 8 + static_cast<double>(n) / 8);
          ASSERT_NEAR(got[i], expected, rel * expected)
              << "backend=" << table->name << " n=" << n << " offset=" << offset << " i=" << i;
          total += got[i];
        }
        EXPECT_NEAR(total, 1.0, FLT_EPSILON * (static_cast<double>(n) / 8 + 8))
            << "backend=" << table->name << " n=" << n;
      }
    }
  }
}

TEST(SwiGluTest, HandWorkedCasesAndExtremes) {
  for (const KernelTable* table : AvailableKernels()) {
    float gate[5] = {0.0f, 1.0f, -1000.0f, 1000.0f, -1.0f};
    const float up[5] = {7.0f, 2.0f, 3.0f, 0.5f, 1.0f};
    table->swiglu(gate, up, 5);
    EXPECT_EQ(gate[0], 0.0f) << table->name;
    EXPECT_NEAR(gate[1], 2.0 / (1.0 + std::exp(-1.0)), 4e-7) << table->name;  // 1.46211716
    EXPECT_EQ(gate[2], 0.0f) << table->name;  // silu(-1000) underflows, no NaN
    EXPECT_EQ(gate[3], 500.0f) << table->name;
    EXPECT_NEAR(gate[4], -1.0 / (1.0 + std::exp(1.0)), 2e-7) << table->name;  // -0.26894142
  }
}

TEST(SwiGluTest, MatchesDoubleReference) {
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t n : {1, 9, 1000}) {
      const std::vector<float> gate = RandomVector(n, static_cast<uint32_t>(n), -8.0f, 8.0f);
      const std::vector<float> up = RandomVector(n, static_cast<uint32_t>(n) + 1, -2.0f, 2.0f);
      std::vector<float> got = gate;
      table->swiglu(got.data(), up.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double g = gate[i];
        const double expected = g / (1.0 + std::exp(-g)) * up[i];
        // exp(-g) is off by a few ulp, amplified by at most |g| in silu's
        // relative error; divide and multiply round once each.
        ASSERT_NEAR(got[i], expected, FLT_EPSILON * (8 + std::fabs(g)) * std::fabs(expected))
            << "backend=" << table->name << " n=" << n << " i=" << i;
      }
    }
  }
}

// inv_freq[i] = scale * base^(-2i / n_rot): plain RoPE with linear scaling.
std::vector<double> PlainInvFreq(int64_t n_rot, double base, double scale) {
  std::vector<double> f(static_cast<size_t>(n_rot / 2));
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    f[i] = scale * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
  }
  return f;
}

TEST(RopeTest, HandWorkedTinyCase) {
  // head_dim 4, pos 1, base 10000: theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01.
  const double c0 = std::cos(1.0), s0 = std::sin(1.0);
  const double c1 = std::cos(0.01), s1 = std::sin(0.01);
  EXPECT_NEAR(c0, 0.5403023059, 1e-10);
  EXPECT_NEAR(s1, 0.0099998333, 1e-10);
  const double inv_freq[2] = {1.0, 0.01};
  for (const KernelTable* table : AvailableKernels()) {
    // Normal: pairs (0,1) by theta_0 and (2,3) by theta_1.
    float x[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    table->rope(x, 1, 4, 1, {inv_freq, 4, 1.0f, RopeMode::kNormal});
    EXPECT_NEAR(x[0], c0, 1e-7) << table->name;
    EXPECT_NEAR(x[1], s0, 1e-7) << table->name;
    EXPECT_NEAR(x[2], -s1, 1e-7) << table->name;
    EXPECT_NEAR(x[3], c1, 1e-7) << table->name;
    // NeoX: pairs (0,2) by theta_0 and (1,3) by theta_1.
    float y[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    table->rope(y, 1, 4, 1, {inv_freq, 4, 1.0f, RopeMode::kNeox});
    EXPECT_NEAR(y[0], c0, 1e-7) << table->name;
    EXPECT_NEAR(y[1], -s1, 1e-7) << table->name;
    EXPECT_NEAR(y[2], s0, 1e-7) << table->name;
    EXPECT_NEAR(y[3], c1, 1e-7) << table->name;
    // Partial NeoX (n_rot 2 of head_dim 4): pair (0,1) by theta_0, dims 2
    // and 3 untouched; mscale 2 doubles the rotated pair.
    float z[4] = {1.0f, 0.0f, 3.0f, 4.0f};
    table->rope(z, 1, 4, 1, {inv_freq, 2, 2.0f, RopeMode::kNeox});
    EXPECT_NEAR(z[0], 2 * c0, 1e-6) << table->name;
    EXPECT_NEAR(z[1], 2 * s0, 1e-6) << table->name;
    EXPECT_EQ(z[2], 3.0f) << table->name;
    EXPECT_EQ(z[3], 4.0f) << table->name;
  }
}

TEST(RopeTest, PositionZeroIsIdentity) {
  const std::vector<double> inv_freq = PlainInvFreq(64, 10000.0, 1.0);
  for (const KernelTable* table : AvailableKernels()) {
    for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
      const std::vector<float> x = RandomVector(3 * 64, 1);
      std::vector<float> got = x;
      table->rope(got.data(), 3, 64, 0, {inv_freq.data(), 64, 1.0f, mode});
      EXPECT_EQ(got, x) << table->name;
    }
  }
}

TEST(RopeTest, MatchesDoubleFormula) {
  struct Case {
    int64_t n_heads, head_dim, n_rot, pos;
    double base, scale;
    float mscale;
  };
  const Case cases[] = {
      {1, 2, 2, 1, 10000.0, 1.0, 1.0f},         {3, 4, 4, 17, 10000.0, 1.0, 1.0f},
      {2, 64, 64, 1000, 10000.0, 1.0, 1.0f},    {4, 128, 128, 4095, 1e6, 1.0, 1.0f},
      {2, 128, 128, 4095, 10000.0, 0.25, 1.0f}, {5, 6, 6, 33, 500.0, 2.0, 1.0f},
      {3, 80, 20, 77, 10000.0, 1.0, 1.0f},      {2, 64, 32, 300, 10000.0, 0.5, 1.1386f},
      {2, 256, 130, 9000, 5e5, 1.0, 0.9f},
  };
  for (const KernelTable* table : AvailableKernels()) {
    for (const Case& c : cases) {
      const std::vector<double> inv_freq = PlainInvFreq(c.n_rot, c.base, c.scale);
      for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
        const std::vector<float> x = RandomVector(c.n_heads * c.head_dim, 9, -2.0f, 2.0f);
        std::vector<float> got = x;
        table->rope(got.data(), c.n_heads, c.head_dim, c.pos,
                    {inv_freq.data(), c.n_rot, c.mscale, mode});
        const int64_t half = c.n_rot / 2;
        for (int64_t h = 0; h < c.n_heads; ++h) {
          const std::string where =
              std::string("backend=") + table->name + " heads=" + std::to_string(c.n_heads) +
              " head_dim=" + std::to_string(c.head_dim) + " n_rot=" + std::to_string(c.n_rot) +
              " pos=" + std::to_string(c.pos) + " mode=" + std::to_string(static_cast<int>(mode)) +
              " h=" + std::to_string(h);
          for (int64_t i = 0; i < half; ++i) {
            const double theta = static_cast<double>(c.pos) * c.scale *
                                 std::pow(c.base, -2.0 * i / static_cast<double>(c.n_rot));
            const int64_t ia = h * c.head_dim + (mode == RopeMode::kNormal ? 2 * i : i);
            const int64_t ib = ia + (mode == RopeMode::kNormal ? 1 : half);
            const double a = x[ia], b = x[ib];
            const double want_a = c.mscale * (a * std::cos(theta) - b * std::sin(theta));
            const double want_b = c.mscale * (a * std::sin(theta) + b * std::cos(theta));
            // A float angle would be off by about |theta| eps; cos/sin and
            // the rotation add a few roundings of |a| + |b|.
            const double tol =
                c.mscale * (std::fabs(a) + std::fabs(b)) * FLT_EPSILON * (8 + 4 * theta);
            ASSERT_NEAR(got[ia], want_a, tol) << where << " i=" << i;
            ASSERT_NEAR(got[ib], want_b, tol) << where << " i=" << i;
          }
          // Dims past n_rot pass through.
          for (int64_t e = c.n_rot; e < c.head_dim; ++e) {
            ASSERT_EQ(got[h * c.head_dim + e], x[h * c.head_dim + e]) << where << " e=" << e;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
