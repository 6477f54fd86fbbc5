// GELU, GeGLU and soft-capping (whose cap 1 is tanh itself) of every
// backend against double-precision formulas written here, over the whole
// float range: a dense grid where the functions bend, a stride through
// every finite bit pattern (subnormals, +-0, huge values), the saturation
// and flush regions, infinities and NaN; then every tail length at two
// alignments, and the documented difference from llama.cpp's fp16 table.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/fp16.h"
#include "kernels/ops.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::RandomVector;

constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;

// 2z of gelu(x) = 0.5 x (1 + tanh(z)).
double TwoZ(double x) { return 2.0 * kSqrt2OverPi * (x + 0.044715 * x * x * x); }

// 0.5 x (1 + tanh(z)) = x sigmoid(2z) exactly; the logistic form keeps its
// digits where 1 + tanh(z) would cancel (x << 0).
double GeluExact(double x) { return x / (1.0 + std::exp(-TwoZ(x))); }

// The spacing of floats at |w| (subnormal spacing below FLT_MIN).
double UlpOf(double w) {
  const double a = std::fabs(w);
  if (a < FLT_MIN) return std::ldexp(1.0, -149);
  int e = 0;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - 24);
}

// Every float kind of input: a 1/1024 grid over [-12, 12] (where GELU
// bends and tanh saturates), a stride through every finite bit pattern
// (about 65,000 values of every exponent, both signs, subnormals
// included), and the signed zeros and largest floats.
std::vector<float> SweepInputs() {
  std::vector<float> xs;
  for (int i = -12 * 1024; i <= 12 * 1024; ++i) xs.push_back(static_cast<float>(i) / 1024.0f);
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65521) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isfinite(f)) xs.push_back(f);
  }
  for (float f : {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f}) {
    xs.push_back(f);
  }
  return xs;
}

std::string Where(const KernelTable& t, float x) {
  return std::string("backend=") + t.name + " x=" + std::to_string(x) + " (bits " +
         std::to_string(std::bit_cast<uint32_t>(x)) + ")";
}

// The rounding of 2z in float (a few roundings of |2z|) passes into exp
// and on to gelu damped by 1 - sigmoid(2z): fully for x < 0, hardly for
// x > 0; exp, the add and the divide add about 2 ulp. Below x = -10, where
// |gelu| < 1.3e-37, exp(-2z) may overflow and the result flush to -0
// (documented in ops.h).
double GeluTolerance(double x, double want) {
  const double two_z = TwoZ(x);
  const double damp = 1.0 / (1.0 + std::exp(two_z));  // 1 - sigmoid(2z)
  return FLT_EPSILON * (3.0 + 3.0 * damp * std::fabs(two_z)) * std::fabs(want) + UlpOf(0.0);
}
bool Flushed(float x, float got) { return x <= -10.0f && got == 0.0f; }

TEST(GeluTest, HandWorkedValues) {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in double, by hand.
  const float x[6] = {1.0f, -1.0f, 2.0f, -2.0f, 0.5f, 3.0f};
  const double want[6] = {0.8411919906082768,   -0.15880800939172324, 1.954597694087775,
                          -0.04540230591222494, 0.34571400982514394,  2.996362607918227};
  for (const KernelTable* table : AvailableKernels()) {
    float got[6];
    std::copy(x, x + 6, got);
    table->gelu(got, 6);
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(got[i], want[i], 2 * UlpOf(want[i])) << Where(*table, x[i]);
    }
  }
  // The public wrapper runs the active backend.
  float one[1] = {1.0f};
  GeluInPlace(one, 1);
  EXPECT_NEAR(one[0], want[0], 2 * UlpOf(want[0]));
}

TEST(GeluTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* table : AvailableKernels()) {
    float v[8] = {0.0f, -0.0f, inf, 1e30f, -1e30f, -20.0f, NAN, 10.0f};
    table->gelu(v, 8);
    EXPECT_EQ(std::bit_cast<uint32_t>(v[0]), std::bit_cast<uint32_t>(0.0f)) << table->name;
    EXPECT_EQ(std::bit_cast<uint32_t>(v[1]), std::bit_cast<uint32_t>(-0.0f)) << table->name;
    EXPECT_EQ(v[2], inf) << table->name;
    EXPECT_EQ(v[3], 1e30f) << table->name;  // x^3 overflows float: still x
    EXPECT_EQ(std::bit_cast<uint32_t>(v[4]), std::bit_cast<uint32_t>(-0.0f)) << table->name;
    EXPECT_EQ(v[5], 0.0f) << table->name;  // gelu(-20) is about -1e-261: no float
    EXPECT_TRUE(std::isnan(v[6])) << table->name;
    EXPECT_EQ(v[7], 10.0f) << table->name;  // sigmoid(2z) rounds to 1 from x = 5 on
  }
}

TEST(GeluTest, MatchesDoubleReferenceOverTheFloatRange) {
  const std::vector<float> xs = SweepInputs();
  const std::vector<float> up = RandomVector(static_cast<int64_t>(xs.size()), 5, -2.0f, 2.0f);
  for (const KernelTable* table : AvailableKernels()) {
    std::vector<float> gelu = xs, geglu = xs;
    table->gelu(gelu.data(), static_cast<int64_t>(xs.size()));
    table->geglu(geglu.data(), up.data(), static_cast<int64_t>(xs.size()));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = GeluExact(xs[i]);
      if (!Flushed(xs[i], gelu[i])) {
        ASSERT_NEAR(gelu[i], want, GeluTolerance(xs[i], want)) << Where(*table, xs[i]);
      }
      // gelu's error times |up|, and one more rounding for the product.
      const double want_glu = want * up[i];
      if (!Flushed(xs[i], geglu[i])) {
        const double tol = GeluTolerance(xs[i], want) * std::fabs(up[i]) +
                           FLT_EPSILON / 2 * std::fabs(want_glu) + UlpOf(0.0);
        // Products past FLT_MAX + half an ulp round to inf.
        const bool may_overflow = std::fabs(want_glu) + tol >= 0x1p128 - 0x1p103;
        if (may_overflow && std::isinf(geglu[i]) && (geglu[i] < 0) == (want_glu < 0)) continue;
        ASSERT_NEAR(geglu[i], want_glu, tol) << Where(*table, xs[i]) << " up=" << up[i];
      }
    }
  }
}

TEST(SoftcapTest, CapOneIsTanhWithinTwoUlpOverTheFloatRange) {
  std::vector<float> xs = SweepInputs();
  for (const KernelTable* table : AvailableKernels()) {
    std::vector<float> got = xs;
    table->softcap(got.data(), static_cast<int64_t>(xs.size()), 1.0f);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = std::tanh(static_cast<double>(xs[i]));
      ASSERT_NEAR(got[i], want, 2 * UlpOf(want)) << Where(*table, xs[i]);
      // tanh rounds to +-1 from |x| = 9.01 on; the kernel saturates exactly.
      if (std::fabs(xs[i]) >= 9.1f) {
        ASSERT_EQ(got[i], std::copysign(1.0f, xs[i])) << Where(*table, xs[i]);
      }
    }
  }
}

TEST(SoftcapTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* table : AvailableKernels()) {
    float v[6] = {0.0f, -0.0f, inf, -inf, NAN, 1e-3f};
    table->softcap(v, 6, 1.0f);
    EXPECT_EQ(std::bit_cast<uint32_t>(v[0]), std::bit_cast<uint32_t>(0.0f)) << table->name;
    EXPECT_EQ(std::bit_cast<uint32_t>(v[1]), std::bit_cast<uint32_t>(-0.0f)) << table->name;
    EXPECT_EQ(v[2], 1.0f) << table->name;
    EXPECT_EQ(v[3], -1.0f) << table->name;
    EXPECT_TRUE(std::isnan(v[4])) << table->name;
    EXPECT_NEAR(v[5], 0.0009999996666668, 1 * UlpOf(1e-3)) << table->name;  // tanh(1e-3)
    float capped[2] = {45.0f, -inf};
    table->softcap(capped, 2, 30.0f);
    EXPECT_NEAR(capped[0], 27.154447609345993, 2 * UlpOf(27.15)) << table->name;
    EXPECT_EQ(capped[1], -30.0f) << table->name;
  }
  float logits[1] = {45.0f};
  SoftcapInPlace(logits, 1, 30.0f);
  EXPECT_NEAR(logits[0], 27.154447609345993, 2 * UlpOf(27.15));
}

TEST(SoftcapTest, GemmaCapsMatchDoubleReference) {
  for (const KernelTable* table : AvailableKernels()) {
    for (float cap : {30.0f, 50.0f}) {
      std::vector<float> xs = RandomVector(4099, 11, -400.0f, 400.0f);
      for (float x : SweepInputs()) xs.push_back(x);
      std::vector<float> got = xs;
      table->softcap(got.data(), static_cast<int64_t>(xs.size()), cap);
      for (size_t i = 0; i < xs.size(); ++i) {
        const double want = cap * std::tanh(xs[i] / static_cast<double>(cap));
        // x / cap rounds once (tanh's condition number is at most 1), tanh
        // within 2 ulp, the product once; a subnormal x / cap rounds to an
        // absolute 2^-150, which the cap multiplies.
        const double tol = 3 * FLT_EPSILON * std::fabs(want) + cap * UlpOf(0.0);
        ASSERT_NEAR(got[i], want, tol) << Where(*table, xs[i]) << " cap=" << cap;
      }
    }
  }
}

// Each element of a short or misaligned call equals the same element of
// one long call (tail lanes compute what body lanes do), and nothing past
// the end is written.
TEST(ActTest, EveryTailLengthAndAlignment) {
  const std::vector<float> x = RandomVector(64, 3, -6.0f, 6.0f);
  const std::vector<float> up = RandomVector(64, 4, -2.0f, 2.0f);
  for (const KernelTable* table : AvailableKernels()) {
    std::vector<float> gelu_all = x, geglu_all = x, cap_all = x;
    table->gelu(gelu_all.data(), 64);
    table->geglu(geglu_all.data(), up.data(), 64);
    table->softcap(cap_all.data(), 64, 3.0f);
    for (int64_t n = 1; n <= 35; ++n) {
      for (int offset : {0, 1}) {
        std::vector<float> a(n + 2, -7.0f), b(n + 2, -7.0f), c(n + 2, -7.0f), u(n + 1);
        std::copy(x.begin(), x.begin() + n, a.begin() + offset);
        std::copy(x.begin(), x.begin() + n, b.begin() + offset);
        std::copy(x.begin(), x.begin() + n, c.begin() + offset);
        std::copy(up.begin(), up.begin() + n, u.begin() + offset);
        table->gelu(a.data() + offset, n);
        table->geglu(b.data() + offset, u.data() + offset, n);
        table->softcap(c.data() + offset, n, 3.0f);
        for (int64_t i = 0; i < n + 2; ++i) {
          const int64_t k = i - offset;
          const bool inside = k >= 0 && k < n;
          const std::string where = std::string("backend=") + table->name +
                                    " n=" + std::to_string(n) +
                                    " offset=" + std::to_string(offset) + " i=" + std::to_string(i);
          ASSERT_EQ(a[i], inside ? gelu_all[k] : -7.0f) << where;
          ASSERT_EQ(b[i], inside ? geglu_all[k] : -7.0f) << where;
          ASSERT_EQ(c[i], inside ? cap_all[k] : -7.0f) << where;
        }
      }
    }
  }
}

// llama.cpp (GGML_GELU_FP16) rounds x to fp16 and reads fp16(gelu) from a
// table for |x| < 10. The sizes ops.h states for that difference, measured
// on every 2^-12 step of [-10, 10) (the largest: half an fp16 ulp of the
// result near |x| = 8; relative, where the result is not tiny).
TEST(GeluTest, DifferenceFromLlamaCppFp16TableIsAsDocumented) {
  for (const KernelTable* table : AvailableKernels()) {
    std::vector<float> xs;
    for (int i = -10 * 4096; i < 10 * 4096; ++i) xs.push_back(static_cast<float>(i) / 4096.0f);
    std::vector<float> ours = xs;
    table->gelu(ours.data(), static_cast<int64_t>(xs.size()));
    double max_abs = 0.0, max_rel = 0.0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float x16 = F16ToF32(F32ToF16(xs[i]));
      const float llama = F16ToF32(F32ToF16(static_cast<float>(GeluExact(x16))));
      const double diff = std::fabs(static_cast<double>(llama) - ours[i]);
      max_abs = std::max(max_abs, diff);
      if (std::fabs(ours[i]) >= 1e-3) max_rel = std::max(max_rel, diff / std::fabs(ours[i]));
    }
    EXPECT_LE(max_abs, 4e-3) << table->name;
    EXPECT_GE(max_abs, 3e-3) << table->name;  // the bound is the real size, not slack
    EXPECT_LE(max_rel, 5e-3) << table->name;
  }
}

}  // namespace
}  // namespace h2o::kernels
