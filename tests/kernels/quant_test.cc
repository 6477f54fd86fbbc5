// Block layouts pinned by hand-built blocks, quantizers pinned by
// hand-derived codes, and the quantize->dequantize error bounded by the
// block scale. Every available backend is checked.
#include "kernels/quant.h"

#include <gtest/gtest.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/fp16.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::AllTypes;
using testing::RandomVector;
using testing::TypeName;

// Two blocks so that a wrong block stride shows up in the second one.
std::vector<BlockQ8_0> HandQ8_0Blocks() {
  std::vector<BlockQ8_0> blocks(2);
  blocks[0].d = 0xC000;  // -2
  blocks[1].d = 0x3400;  // 0.25
  for (int i = 0; i < 32; ++i) {
    blocks[0].qs[i] = static_cast<int8_t>(i - 16);
    blocks[1].qs[i] = static_cast<int8_t>(i % 2 == 0 ? 127 - i : -128 + i);
  }
  return blocks;
}

float HandQ8_0Value(int index) {
  if (index < 32) return -2.0f * static_cast<float>(index - 16);
  const int i = index - 32;
  return 0.25f * static_cast<float>(i % 2 == 0 ? 127 - i : -128 + i);
}

std::vector<BlockQ4_0> HandQ4_0Blocks() {
  std::vector<BlockQ4_0> blocks(2);
  blocks[0].d = 0x3800;  // 0.5
  blocks[1].d = 0xC200;  // -3
  for (int j = 0; j < 16; ++j) {
    blocks[0].qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    blocks[1].qs[j] = static_cast<uint8_t>(((j * 5) % 16) | (j % 3) << 4);
  }
  return blocks;
}

// Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble.
float HandQ4_0Value(int index) {
  const int block = index / 32;
  const int e = index % 32;
  const int j = e % 16;
  const bool high = e >= 16;
  if (block == 0) return 0.5f * static_cast<float>((high ? 15 - j : j) - 8);
  return -3.0f * static_cast<float>((high ? j % 3 : (j * 5) % 16) - 8);
}

// Every backend's f16 quantize_row (the KV cache's append) equals the
// scalar F32ToF16 bit for bit: each half and the float just below and
// above it, every midpoint between neighbours (ties to even), values past
// the largest half, float denormals, infinities and NaNs with payloads;
// rows of every length 1..17 (the tails), with the caller's MXCSR as it is
// and with FTZ and DAZ set (as attention's scope sets them).
TEST(QuantTest, F16RowsMatchTheScalarConversionBitForBit) {
  std::vector<float> values;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    values.push_back(f);
    if (std::isfinite(f)) {
      values.push_back(std::nextafter(f, -INFINITY));
      values.push_back(std::nextafter(f, INFINITY));
      if ((h & 0x7FFF) < 0x7BFF) {
        values.push_back((f + F16ToF32(static_cast<uint16_t>(h + 1))) / 2);
      }
    }
  }
  for (float f : {65504.0f, 65519.0f, 65520.0f, 1e5f, 3e38f, 1e-40f, -1e-45f, 5.9604645e-8f,
                  2.9802322e-8f, 2.9802326e-8f}) {
    values.push_back(f);
    values.push_back(-f);
  }
  for (uint32_t bits : {0x7F800001u, 0x7FC00000u, 0x7FA5A5A5u, 0xFFFFFFFFu, 0x7F802000u}) {
    values.push_back(std::bit_cast<float>(bits));
  }
  const auto check = [&](const KernelTable& table, const char* mxcsr) {
    const QuantizeRowFn quantize = table.f16.quantize_row;
    std::vector<uint16_t> got(values.size());
    quantize(values.data(), got.data(), static_cast<int64_t>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(got[i], F32ToF16(values[i]))
          << table.name << " " << mxcsr << " value bits " << std::hex
          << std::bit_cast<uint32_t>(values[i]);
    }
    for (int64_t n = 1; n <= 17; ++n) {
      std::vector<uint16_t> row(n + 1, 0xABCD);
      quantize(values.data() + 1000, row.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(row[i], F32ToF16(values[1000 + i])) << n;
      ASSERT_EQ(row[n], 0xABCD) << table.name << " wrote past a row of " << n;
    }
  };
  for (const KernelTable* table : AvailableKernels()) {
    check(*table, "as is");
#if defined(__x86_64__)
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | 0x8040u);  // FTZ and DAZ
    check(*table, "FTZ+DAZ");
    _mm_setcsr(saved);
#endif
  }
}

TEST(QuantTest, HandBuiltQ8_0BlocksDecode) {
  const std::vector<BlockQ8_0> blocks = HandQ8_0Blocks();
  EXPECT_EQ(HandQ8_0Value(0), 32.0f);
  EXPECT_EQ(HandQ8_0Value(33), 0.25f * -127);
  for (const KernelTable* table : AvailableKernels()) {
    std::vector<float> out(64);
    table->q8_0.dequantize_row(blocks.data(), out.data(), 64);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], HandQ8_0Value(i)) << table->name << " i=" << i;
    // A unit vector picks one element out of the dot product.
    for (int i = 0; i < 64; ++i) {
      std::vector<float> unit(64, 0.0f);
      unit[i] = 1.0f;
      EXPECT_EQ(table->q8_0.dot_row(blocks.data(), unit.data(), 64), HandQ8_0Value(i))
          << table->name << " i=" << i;
    }
  }
}

TEST(QuantTest, HandBuiltQ4_0BlocksDecode) {
  const std::vector<BlockQ4_0> blocks = HandQ4_0Blocks();
  // Spot values worked out by hand: qs[3] = 0xC3, qs[3] of block 1 = 0x0F.
  EXPECT_EQ(HandQ4_0Value(3), -2.5f);
  EXPECT_EQ(HandQ4_0Value(19), 2.0f);
  EXPECT_EQ(HandQ4_0Value(32 + 3), -21.0f);
  EXPECT_EQ(HandQ4_0Value(32 + 19), 24.0f);
  for (const KernelTable* table : AvailableKernels()) {
    std::vector<float> out(64);
    table->q4_0.dequantize_row(blocks.data(), out.data(), 64);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], HandQ4_0Value(i)) << table->name << " i=" << i;
    for (int i = 0; i < 64; ++i) {
      std::vector<float> unit(64, 0.0f);
      unit[i] = 1.0f;
      EXPECT_EQ(table->q4_0.dot_row(blocks.data(), unit.data(), 64), HandQ4_0Value(i))
          << table->name << " i=" << i;
    }
  }
}

TEST(QuantTest, Q8_0QuantizesLikeGgml) {
  // amax = 127 makes d = 1 exactly, so the codes are round(x), with ties
  // away from zero as roundf does.
  std::vector<float> x(32, 0.0f);
  x[0] = -127.0f;
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 0.4f;
  x[4] = 0.6f;
  x[5] = 126.5f;
  x[6] = -0.49f;
  const int8_t expected[7] = {-127, 3, -3, 0, 1, 127, 0};
  for (const KernelTable* table : AvailableKernels()) {
    BlockQ8_0 block;
    table->q8_0.quantize_row(x.data(), &block, 32);
    EXPECT_EQ(block.d, 0x3C00) << table->name;
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(block.qs[i], i < 7 ? expected[i] : 0) << table->name << " i=" << i;
    }
    // An all-zero block gets d = 0 and zero codes (no division by zero).
    const std::vector<float> zeros(32, 0.0f);
    table->q8_0.quantize_row(zeros.data(), &block, 32);
    EXPECT_EQ(block.d, 0) << table->name;
    for (int i = 0; i < 32; ++i) EXPECT_EQ(block.qs[i], 0) << table->name;
  }
}

TEST(QuantTest, Q4_0QuantizesLikeGgml) {
  // x_j = j - 16: the extreme is -16, so d = -16 / -8 = 2 and the code of
  // x is trunc(x / 2 + 8.5) = (j + 1) / 2, clamped to 15.
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  auto code = [](int j) { return std::min(15, (j + 1) / 2); };
  for (const KernelTable* table : AvailableKernels()) {
    BlockQ4_0 block;
    table->q4_0.quantize_row(x.data(), &block, 32);
    EXPECT_EQ(block.d, 0x4000) << table->name;
    EXPECT_EQ(block.qs[0], 0x80) << table->name;
    EXPECT_EQ(block.qs[1], 0x91) << table->name;
    EXPECT_EQ(block.qs[15], 0xF8) << table->name;
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(block.qs[j], code(j) | code(j + 16) << 4) << table->name << " j=" << j;
    }
    // A positive extreme gives a negative d: x = +16 must still decode to +16.
    x[0] = 16.0f;
    table->q4_0.quantize_row(x.data(), &block, 32);
    EXPECT_EQ(block.d, 0xC000) << table->name;  // -2
    EXPECT_EQ(block.qs[0] & 0x0F, 0) << table->name;
    x[0] = -16.0f;
    const std::vector<float> zeros(32, 0.0f);
    table->q4_0.quantize_row(zeros.data(), &block, 32);
    EXPECT_EQ(block.d, 0x8000) << table->name;  // 0 / -8 = -0, as in GGML
    for (int j = 0; j < 16; ++j) EXPECT_EQ(block.qs[j], 0x88) << table->name;
  }
}

// Random blocks spanning several orders of magnitude.
std::vector<float> ScaledRandom(int64_t n, uint32_t seed) {
  std::vector<float> x = RandomVector(n, seed);
  for (int64_t i = 0; i < n; ++i) x[i] *= std::pow(10.0f, static_cast<float>((i / 32) % 5 - 2));
  return x;
}

TEST(QuantTest, QuantizedRoundTripErrorIsBoundedByBlockScale) {
  const int64_t n = 32 * 40;
  const std::vector<float> x = ScaledRandom(n, 7);
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kQ8_0, TensorType::kQ4_0}) {
      const bool q8 = type == TensorType::kQ8_0;
      std::vector<uint8_t> row(RowBytes(type, n));
      table->For(type).quantize_row(x.data(), row.data(), n);
      std::vector<float> y(n);
      table->For(type).dequantize_row(row.data(), y.data(), n);
      for (int64_t b = 0; b < n / 32; ++b) {
        // The ideal scale in double, and the fp16 one the block stores. Codes
        // are chosen with the ideal scale (error <= d/2 for Q8_0, <= d for
        // Q4_0 whose top code is clamped), then decoded with the stored one,
        // which moves each value by |code| * |d - d_stored|.
        double amax = 0.0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(double{x[b * 32 + j]}));
        const double d = amax / (q8 ? 127.0 : 8.0);
        const uint16_t d_bits = q8 ? reinterpret_cast<const BlockQ8_0*>(row.data())[b].d
                                   : reinterpret_cast<const BlockQ4_0*>(row.data())[b].d;
        const double d_stored = std::fabs(double{F16ToF32(d_bits)});
        const double bound = (q8 ? 0.5 : 1.0) * d + (q8 ? 127 : 8) * std::fabs(d - d_stored) +
                             1e-6 * amax;  // float rounding of x / d
        for (int j = 0; j < 32; ++j) {
          const int64_t i = b * 32 + j;
          ASSERT_LE(std::fabs(double{x[i]} - y[i]), bound)
              << table->name << " " << TypeName(type) << " block=" << b << " j=" << j;
        }
      }
    }
  }
}

// GGML's q4_1: d = (max - min) / 15, m = min, code = trunc((x - min) / d +
// 0.5). x_j = min(j, 30) - 3 spans [-3, 27], so d = 2 and the code of
// element j is (min(j, 30) + 1) / 2.
TEST(QuantTest, Q4_1QuantizesLikeGgml) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(std::min(j, 30) - 3);
  auto code = [](int j) { return (std::min(j, 30) + 1) / 2; };
  for (const KernelTable* table : AvailableKernels()) {
    BlockQ4_1 block;
    table->q4_1.quantize_row(x.data(), &block, 32);
    EXPECT_EQ(block.d, 0x4000) << table->name;  // 2
    EXPECT_EQ(block.m, 0xC200) << table->name;  // -3
    EXPECT_EQ(block.qs[0], 0x80) << table->name;
    EXPECT_EQ(block.qs[1], 0x91) << table->name;
    EXPECT_EQ(block.qs[15], 0xF8) << table->name;
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(block.qs[j], code(j) | code(j + 16) << 4) << table->name << " j=" << j;
    }
  }
}

// GGML's q5_1 with x_j = j - 3: range 31, so d = 1, m = -3 and code j; bit
// 4 of codes 16..31 fills the top half of qh.
TEST(QuantTest, Q5_1QuantizesLikeGgml) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 3);
  for (const KernelTable* table : AvailableKernels()) {
    BlockQ5_1 block;
    table->q5_1.quantize_row(x.data(), &block, 32);
    EXPECT_EQ(block.d, 0x3C00) << table->name;
    EXPECT_EQ(block.m, 0xC200) << table->name;
    for (int j = 0; j < 16; ++j) EXPECT_EQ(block.qs[j], j | j << 4) << table->name << " j=" << j;
    const uint8_t qh[4] = {0x00, 0x00, 0xFF, 0xFF};
    EXPECT_EQ(std::memcmp(block.qh, qh, 4), 0) << table->name;
  }
}

// GGML's q5_0: the signed extreme maps to code 0, d = extreme / -16, code =
// trunc(x / d + 16.5) clamped to 31. x_j = j - 16 gives d = 1 and code j; a
// positive extreme flips d.
TEST(QuantTest, Q5_0QuantizesLikeGgml) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  for (const KernelTable* table : AvailableKernels()) {
    BlockQ5_0 block;
    table->q5_0.quantize_row(x.data(), &block, 32);
    EXPECT_EQ(block.d, 0x3C00) << table->name;
    for (int j = 0; j < 16; ++j) EXPECT_EQ(block.qs[j], j | j << 4) << table->name << " j=" << j;
    const uint8_t qh[4] = {0x00, 0x00, 0xFF, 0xFF};
    EXPECT_EQ(std::memcmp(block.qh, qh, 4), 0) << table->name;
    // +16 is the extreme now (first of largest magnitude): d = -1, its code
    // is 0, and -16 gets trunc(16 + 16.5) = 32, clamped to 31.
    std::vector<float> y = x;
    y[31] = 16.0f;
    std::swap(y[0], y[31]);
    table->q5_0.quantize_row(y.data(), &block, 32);
    EXPECT_EQ(block.d, 0xBC00) << table->name;
    EXPECT_EQ(block.qs[0] & 0x0F, 0) << table->name;
    EXPECT_EQ(block.qh[0] & 1, 0) << table->name;
    EXPECT_EQ(block.qs[15] >> 4, 15) << table->name;  // element 31 = -16 -> 31
    EXPECT_EQ(block.qh[3] >> 7, 1) << table->name;
  }
}

// The quantizers' documented guarantees (quant.h), per sub-block of the
// data, with the stored super-block scales read from the block.
struct KBounds {
  int sub;       // elements per sub-block
  int code_max;  // affine: codes 0..code_max; symmetric: half = code_max
  bool affine;
};

KBounds BoundsOf(TensorType type) {
  switch (type) {
    case TensorType::kQ2_K:
      return {16, 3, true};
    case TensorType::kQ4_K:
      return {32, 15, true};
    case TensorType::kQ5_K:
      return {32, 31, true};
    case TensorType::kQ3_K:
      return {16, 4, false};
    default:
      return {16, 32, false};  // q6_K
  }
}

// d and dmin of super-block b.
std::pair<double, double> SuperScales(TensorType type, const uint8_t* row, int64_t b) {
  switch (type) {
    case TensorType::kQ2_K: {
      const auto& k = reinterpret_cast<const BlockQ2_K*>(row)[b];
      return {F16ToF32(k.d), F16ToF32(k.dmin)};
    }
    case TensorType::kQ4_K: {
      const auto& k = reinterpret_cast<const BlockQ4_K*>(row)[b];
      return {F16ToF32(k.d), F16ToF32(k.dmin)};
    }
    case TensorType::kQ5_K: {
      const auto& k = reinterpret_cast<const BlockQ5_K*>(row)[b];
      return {F16ToF32(k.d), F16ToF32(k.dmin)};
    }
    case TensorType::kQ3_K:
      return {F16ToF32(reinterpret_cast<const BlockQ3_K*>(row)[b].d), 0.0};
    default:
      return {F16ToF32(reinterpret_cast<const BlockQ6_K*>(row)[b].d), 0.0};
  }
}

TEST(QuantTest, KQuantRoundTripErrorIsWithinTheDocumentedBound) {
  const int64_t n = 256 * 12;
  std::vector<float> x = ScaledRandom(n, 13);
  for (int64_t i = 256; i < 512; ++i) x[i] = std::fabs(x[i]) + 0.5f;  // all positive: min 0
  for (int64_t i = 512; i < 768; ++i) x[i] = -std::fabs(x[i]);        // all negative
  std::fill(x.begin() + 768, x.begin() + 800, 0.0f);                  // zero sub-blocks
  for (TensorType type : testing::KTypes()) {
    const KBounds kb = BoundsOf(type);
    for (const KernelTable* table : AvailableKernels()) {
      std::vector<uint8_t> row(RowBytes(type, n));
      table->For(type).quantize_row(x.data(), row.data(), n);
      std::vector<float> y(n);
      table->For(type).dequantize_row(row.data(), y.data(), n);
      for (int64_t s = 0; s < n / kb.sub; ++s) {
        const auto [d, dmin] = SuperScales(type, row.data(), s * kb.sub / 256);
        double lo = 0.0, hi = -1e30, amax = 0.0, extreme = 0.0;
        for (int64_t i = s * kb.sub; i < (s + 1) * kb.sub; ++i) {
          lo = std::min(lo, double{x[i]});
          hi = std::max(hi, double{x[i]});
          if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            extreme = x[i];
          }
        }
        const double slack = 1e-6 * std::max(amax, std::fabs(lo) + dmin * 63);
        for (int64_t i = s * kb.sub; i < (s + 1) * kb.sub; ++i) {
          const double err = std::fabs(double{x[i]} - y[i]);
          double bound;
          if (kb.affine) {
            // Half a step, the step at most (range + dmin) / code_max + d.
            bound = 0.5 * ((hi - lo + dmin) / kb.code_max + d);
          } else {
            // A step at most amax / half + d; half of it on the extreme's side.
            const double step = amax / kb.code_max + d;
            bound = (x[i] * extreme >= 0 ? 0.5 : 1.0) * step;
          }
          ASSERT_LE(err, bound + slack) << table->name << " " << TypeName(type) << " i=" << i
                                        << " x=" << x[i] << " y=" << y[i];
        }
      }
      // The super-block scales are not inflated either: d covers the
      // largest step need with one half-precision rounding up.
      for (int64_t b = 0; b < n / 256; ++b) {
        const auto [d, dmin] = SuperScales(type, row.data(), b);
        double need = 0.0;
        for (int64_t s = b * 256 / kb.sub; s < (b + 1) * 256 / kb.sub; ++s) {
          double lo = 0.0, hi = -1e30, amax = 0.0;
          for (int64_t i = s * kb.sub; i < (s + 1) * kb.sub; ++i) {
            lo = std::min(lo, double{x[i]});
            hi = std::max(hi, double{x[i]});
            amax = std::max(amax, std::fabs(double{x[i]}));
          }
          need = std::max(need, kb.affine ? (hi - lo + dmin) / kb.code_max : amax / kb.code_max);
        }
        const int scale_max = type == TensorType::kQ6_K   ? 127
                              : type == TensorType::kQ3_K ? 31
                              : type == TensorType::kQ2_K ? 15
                                                          : 63;
        EXPECT_LE(d, need / scale_max * (1 + 0x1p-10) + 0x1p-24)
            << table->name << " " << TypeName(type) << " block " << b;
      }
    }
  }
}

TEST(QuantTest, LegacyRoundTripErrorIsBoundedByBlockScale) {
  const int64_t n = 32 * 40;
  const std::vector<float> x = ScaledRandom(n, 17);
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kQ4_1, TensorType::kQ5_1, TensorType::kQ5_0}) {
      std::vector<uint8_t> row(RowBytes(type, n));
      table->For(type).quantize_row(x.data(), row.data(), n);
      std::vector<float> y(n);
      table->For(type).dequantize_row(row.data(), y.data(), n);
      for (int64_t b = 0; b < n / 32; ++b) {
        double lo = 1e30, hi = -1e30, amax = 0.0;
        for (int j = 0; j < 32; ++j) {
          lo = std::min(lo, double{x[b * 32 + j]});
          hi = std::max(hi, double{x[b * 32 + j]});
          amax = std::max(amax, std::fabs(double{x[b * 32 + j]}));
        }
        // Codes are chosen with the fp32 d (and min) and decoded with the
        // stored halves, which moves each value by code * |d - d'| + |m - m'|.
        double bound;
        if (type == TensorType::kQ5_0) {
          const double d = amax / 16;
          const double d_stored =
              std::fabs(F16ToF32(reinterpret_cast<const BlockQ5_0*>(row.data())[b].d));
          bound = d + 16 * std::fabs(d - d_stored);  // the top code is clamped: up to one step
        } else {
          const int code_max = type == TensorType::kQ4_1 ? 15 : 31;
          const uint16_t d_bits = type == TensorType::kQ4_1
                                      ? reinterpret_cast<const BlockQ4_1*>(row.data())[b].d
                                      : reinterpret_cast<const BlockQ5_1*>(row.data())[b].d;
          const uint16_t m_bits = type == TensorType::kQ4_1
                                      ? reinterpret_cast<const BlockQ4_1*>(row.data())[b].m
                                      : reinterpret_cast<const BlockQ5_1*>(row.data())[b].m;
          const double d = (hi - lo) / code_max;
          bound = 0.5 * d + code_max * std::fabs(d - F16ToF32(d_bits)) +
                  std::fabs(lo - F16ToF32(m_bits));
        }
        for (int j = 0; j < 32; ++j) {
          const int64_t i = b * 32 + j;
          ASSERT_LE(std::fabs(double{x[i]} - y[i]), bound + 1e-6 * amax)
              << table->name << " " << TypeName(type) << " block=" << b << " j=" << j;
        }
      }
    }
  }
}

TEST(QuantTest, FloatRoundTripErrorIsHalfAnUlp) {
  const int64_t n = 1023;  // float types have no block constraint
  const std::vector<float> x = ScaledRandom(n, 11);
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      if (TraitsOf(type).block_size != 1) continue;
      // Relative half-ulp: 2^-24 (f32 copy is exact), 2^-11 (f16), 2^-8 (bf16).
      const double rel = type == TensorType::kF32   ? 0.0
                         : type == TensorType::kF16 ? 0x1p-11
                                                    : 0x1p-8;
      std::vector<uint8_t> row(RowBytes(type, n));
      table->For(type).quantize_row(x.data(), row.data(), n);
      std::vector<float> y(n);
      table->For(type).dequantize_row(row.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        // The f16 subnormal spacing 2^-24 bounds the error of tiny values.
        const double bound =
            rel * std::fabs(double{x[i]}) + (type == TensorType::kF16 ? 0x1p-25 : 0.0);
        ASSERT_LE(std::fabs(double{x[i]} - y[i]), bound)
            << table->name << " " << TypeName(type) << " i=" << i << " x=" << x[i];
      }
    }
  }
}

TEST(QuantTest, PublicFunctionsMatchTheActiveBackend) {
  const KernelTable& active = ActiveKernels();
  for (TensorType type : AllTypes()) {
    const int64_t n = testing::WholeBlocks(type, 96);
    const std::vector<float> x = ScaledRandom(n, 3);
    std::vector<uint8_t> expected(RowBytes(type, n)), actual(RowBytes(type, n));
    active.For(type).quantize_row(x.data(), expected.data(), n);
    QuantizeRow(type, x.data(), actual.data(), n);
    EXPECT_EQ(actual, expected) << TypeName(type);
    std::vector<float> y_expected(n), y_actual(n);
    active.For(type).dequantize_row(expected.data(), y_expected.data(), n);
    DequantizeRow(type, expected.data(), y_actual.data(), n);
    EXPECT_EQ(y_actual, y_expected) << TypeName(type);
    EXPECT_EQ(DotRow(type, expected.data(), x.data(), n),
              active.For(type).dot_row(expected.data(), x.data(), n))
        << TypeName(type);
  }
}

}  // namespace
}  // namespace h2o::kernels
