// RmsNorm, Softmax, SwiGlu and RoPE of every backend against
// double-precision formulas and hand-worked cases.
#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
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

TEST(RopeTest, HandWorkedTinyCase) {
  // head_dim 4, pos 1, base 10000: theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01.
  const double c0 = std::cos(1.0), s0 = std::sin(1.0);
  const double c1 = std::cos(0.01), s1 = std::sin(0.01);
  EXPECT_NEAR(c0, 0.5403023059, 1e-10);
  EXPECT_NEAR(s1, 0.0099998333, 1e-10);
  for (const KernelTable* table : AvailableKernels()) {
    // Normal: pairs (0,1) by theta_0 and (2,3) by theta_1.
    float x[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    table->rope(x, 1, 4, 1, 10000.0f, 1.0f, RopeMode::kNormal);
    EXPECT_NEAR(x[0], c0, 1e-7) << table->name;
    EXPECT_NEAR(x[1], s0, 1e-7) << table->name;
    EXPECT_NEAR(x[2], -s1, 1e-7) << table->name;
    EXPECT_NEAR(x[3], c1, 1e-7) << table->name;
    // NeoX: pairs (0,2) by theta_0 and (1,3) by theta_1.
    float y[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    table->rope(y, 1, 4, 1, 10000.0f, 1.0f, RopeMode::kNeox);
    EXPECT_NEAR(y[0], c0, 1e-7) << table->name;
    EXPECT_NEAR(y[1], -s1, 1e-7) << table->name;
    EXPECT_NEAR(y[2], s0, 1e-7) << table->name;
    EXPECT_NEAR(y[3], c1, 1e-7) << table->name;
  }
}

TEST(RopeTest, PositionZeroIsIdentity) {
  for (const KernelTable* table : AvailableKernels()) {
    for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
      const std::vector<float> x = RandomVector(3 * 64, 1);
      std::vector<float> got = x;
      table->rope(got.data(), 3, 64, 0, 10000.0f, 1.0f, mode);
      EXPECT_EQ(got, x) << table->name;
    }
  }
}

TEST(RopeTest, MatchesDoubleFormula) {
  struct Case {
    int64_t n_heads, head_dim, pos;
    float base, scale;
  };
  const Case cases[] = {
      {1, 2, 1, 10000.0f, 1.0f},  {3, 4, 17, 10000.0f, 1.0f},      {2, 64, 1000, 10000.0f, 1.0f},
      {4, 128, 4095, 1e6f, 1.0f}, {2, 128, 4095, 10000.0f, 0.25f}, {5, 6, 33, 500.0f, 2.0f},
  };
  for (const KernelTable* table : AvailableKernels()) {
    for (const Case& c : cases) {
      for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
        const std::vector<float> x = RandomVector(c.n_heads * c.head_dim, 9, -2.0f, 2.0f);
        std::vector<float> got = x;
        table->rope(got.data(), c.n_heads, c.head_dim, c.pos, c.base, c.scale, mode);
        const int64_t half = c.head_dim / 2;
        for (int64_t h = 0; h < c.n_heads; ++h) {
          for (int64_t i = 0; i < half; ++i) {
            const double theta =
                static_cast<double>(c.pos) * c.scale *
                std::pow(double{c.base}, -2.0 * i / static_cast<double>(c.head_dim));
            const int64_t ia = h * c.head_dim + (mode == RopeMode::kNormal ? 2 * i : i);
            const int64_t ib = ia + (mode == RopeMode::kNormal ? 1 : half);
            const double a = x[ia], b = x[ib];
            const double want_a = a * std::cos(theta) - b * std::sin(theta);
            const double want_b = a * std::sin(theta) + b * std::cos(theta);
            // A float angle would be off by about |theta| eps; cos/sin and
            // the rotation add a few roundings of |a| + |b|.
            const double tol = (std::fabs(a) + std::fabs(b)) * FLT_EPSILON * (8 + 4 * theta);
            ASSERT_NEAR(got[ia], want_a, tol)
                << "backend=" << table->name << " heads=" << c.n_heads << " head_dim=" << c.head_dim
                << " pos=" << c.pos << " mode=" << static_cast<int>(mode) << " h=" << h
                << " i=" << i;
            ASSERT_NEAR(got[ib], want_b, tol)
                << "backend=" << table->name << " heads=" << c.n_heads << " head_dim=" << c.head_dim
                << " pos=" << c.pos << " mode=" << static_cast<int>(mode) << " h=" << h
                << " i=" << i;
          }
        }
      }
    }
  }
}

TEST(OpsTest, PublicFunctionsMatchTheActiveBackend) {
  const KernelTable& active = ActiveKernels();
  const int64_t n = 64;
  const std::vector<float> x = RandomVector(n, 21);
  const std::vector<float> w = RandomVector(n, 22);
  std::vector<float> a(n), b(n);
  RmsNorm(x.data(), w.data(), a.data(), n, 1e-6f);
  active.rms_norm(x.data(), w.data(), b.data(), n, 1e-6f);
  EXPECT_EQ(a, b);
  a = x;
  b = x;
  SoftmaxInPlace(a.data(), n);
  active.softmax(b.data(), n);
  EXPECT_EQ(a, b);
  a = x;
  b = x;
  SwiGluInPlace(a.data(), w.data(), n);
  active.swiglu(b.data(), w.data(), n);
  EXPECT_EQ(a, b);
  a = x;
  b = x;
  RopeInPlace(a.data(), 2, 32, 7, 10000.0f, 1.0f, RopeMode::kNeox);
  active.rope(b.data(), 2, 32, 7, 10000.0f, 1.0f, RopeMode::kNeox);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace h2o::kernels
