#include "kernels/fp16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

namespace h2o::kernels {
namespace {

bool IsHalfNan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

TEST(Fp16Test, DecodesHandDerivedBitPatterns) {
  EXPECT_EQ(F16ToF32(0x3C00), 1.0f);
  EXPECT_EQ(F16ToF32(0xC000), -2.0f);
  EXPECT_EQ(F16ToF32(0x7BFF), 65504.0f);
  EXPECT_EQ(F16ToF32(0x3555), 0x1.554p-2f);  // 0.333251953125, nearest half to 1/3
  EXPECT_EQ(F16ToF32(0x0400), 0x1p-14f);     // smallest normal
  EXPECT_EQ(F16ToF32(0x0001), 0x1p-24f);     // smallest subnormal
  EXPECT_EQ(F16ToF32(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(F16ToF32(0x8001), -0x1p-24f);
  EXPECT_EQ(std::bit_cast<uint32_t>(F16ToF32(0x0000)), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(F16ToF32(0x8000)), 0x80000000u);  // -0 keeps its sign
  EXPECT_EQ(F16ToF32(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(F16ToF32(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(F16ToF32(0x7E00)));
  EXPECT_TRUE(std::isnan(F16ToF32(0x7C01)));  // signalling NaN is still NaN
}

TEST(Fp16Test, EncodesHandDerivedValues) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3C00);
  EXPECT_EQ(F32ToF16(-2.0f), 0xC000);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7BFF);
  EXPECT_EQ(F32ToF16(0.0f), 0x0000);
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(F32ToF16(0x1p-14f), 0x0400);
  EXPECT_EQ(F32ToF16(0x1p-24f), 0x0001);
  EXPECT_EQ(F32ToF16(-0x1p-24f), 0x8001);
  EXPECT_EQ(F32ToF16(1023 * 0x1p-24f), 0x03FF);
  EXPECT_EQ(F32ToF16(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(F32ToF16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(F32ToF16(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(F32ToF16(1e10f), 0x7C00);
  EXPECT_EQ(F32ToF16(-1e10f), 0xFC00);
  EXPECT_EQ(F32ToF16(1e-10f), 0x0000);  // far below the smallest subnormal
  EXPECT_TRUE(IsHalfNan(F32ToF16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(IsHalfNan(F32ToF16(-std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload lives only in the low float bits must not become inf.
  EXPECT_TRUE(IsHalfNan(F32ToF16(std::bit_cast<float>(0x7F800001u))));
}

TEST(Fp16Test, RoundsTiesToEven) {
  // Half has 10 mantissa bits: near 1 the spacing is 2^-10, the tie 2^-11.
  EXPECT_EQ(F32ToF16(1.0f + 0x1p-11f), 0x3C00);             // tie, 0x3C00 is even
  EXPECT_EQ(F32ToF16(1.0f + 3 * 0x1p-11f), 0x3C02);         // tie, 0x3C01 odd -> up
  EXPECT_EQ(F32ToF16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);  // just above the tie
  EXPECT_EQ(F32ToF16(1.0f + 0x1p-11f - 0x1p-23f), 0x3C00);  // just below the tie
  EXPECT_EQ(F32ToF16(2.0f - 0x1p-11f), 0x4000);  // tie, 0x3BFF odd: carries into the exponent
  // 65520 is halfway between 65504 (odd mantissa) and 2^16: overflows.
  EXPECT_EQ(F32ToF16(65519.996f), 0x7BFF);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7C00);
  // Subnormal ties: spacing 2^-24.
  EXPECT_EQ(F32ToF16(0x1p-25f), 0x0000);  // tie between 0 and 1 -> 0
  EXPECT_EQ(F32ToF16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(F32ToF16(3 * 0x1p-25f), 0x0002);  // tie between 1 and 2 -> 2
  EXPECT_EQ(F32ToF16(5 * 0x1p-25f), 0x0002);  // tie between 2 and 3 -> 2
  // Tie between the largest subnormal and the smallest normal -> normal (even).
  EXPECT_EQ(F32ToF16(1023.5f * 0x1p-24f), 0x0400);
}

TEST(Fp16Test, RoundTripsAllHalves) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const uint16_t back = F32ToF16(F16ToF32(static_cast<uint16_t>(h)));
    if (IsHalfNan(static_cast<uint16_t>(h))) {
      EXPECT_TRUE(IsHalfNan(back)) << std::hex << h;
      EXPECT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
      if (h & 0x200) {
        EXPECT_EQ(back, h) << std::hex << h;  // quiet NaN payload kept
      }
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

// Every midpoint between neighbouring finite halves must round to the even
// one, and the floats just beside it to the nearer one.
TEST(Fp16Test, MidpointsBetweenAllNeighboursRoundCorrectly) {
  for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
    for (uint16_t h = 0; h < 0x7BFF; ++h) {
      const uint16_t lo = sign | h;
      const uint16_t hi = sign | static_cast<uint16_t>(h + 1);
      const float a = F16ToF32(lo);
      const float b = F16ToF32(hi);
      const float mid = (a + b) / 2;  // exact: needs only 12 significant bits
      ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(a) + b) / 2);
      const uint16_t even = (h & 1) ? hi : lo;
      ASSERT_EQ(F32ToF16(mid), even) << std::hex << lo;
      ASSERT_EQ(F32ToF16(std::nextafter(mid, a)), lo) << std::hex << lo;
      ASSERT_EQ(F32ToF16(std::nextafter(mid, b)), hi) << std::hex << lo;
    }
  }
}

TEST(Bf16Test, HandDerivedValues) {
  EXPECT_EQ(F32ToBF16(1.0f), 0x3F80);
  EXPECT_EQ(F32ToBF16(-2.0f), 0xC000);
  EXPECT_EQ(BF16ToF32(0x3F80), 1.0f);
  EXPECT_EQ(BF16ToF32(0xC000), -2.0f);
  EXPECT_EQ(BF16ToF32(0x0001), 0x1p-133f);  // smallest subnormal bf16
  EXPECT_EQ(F32ToBF16(0x1p-133f), 0x0001);
  EXPECT_EQ(F32ToBF16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(F32ToBF16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(BF16ToF32(0x7F80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(F32ToBF16(std::numeric_limits<float>::max()), 0x7F80);  // above the last tie
  EXPECT_EQ(F32ToBF16(0x1.fep127f), 0x7F7F);                        // largest finite bf16
  // 7 mantissa bits: near 1 the spacing is 2^-7, the tie 2^-8.
  EXPECT_EQ(F32ToBF16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(F32ToBF16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(F32ToBF16(1.0f + 0x1p-8f + 0x1p-23f), 0x3F81);
  EXPECT_TRUE(std::isnan(BF16ToF32(F32ToBF16(std::numeric_limits<float>::quiet_NaN()))));
  // Payload only in the dropped bits: truncation would give inf.
  EXPECT_TRUE(std::isnan(BF16ToF32(F32ToBF16(std::bit_cast<float>(0x7F800001u)))));
}

TEST(Bf16Test, RoundTripsAllValues) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float f = BF16ToF32(static_cast<uint16_t>(b));
    const uint16_t back = F32ToBF16(f);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(BF16ToF32(back))) << std::hex << b;
    } else {
      ASSERT_EQ(back, b) << std::hex << b;
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
