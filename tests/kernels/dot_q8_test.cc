// The integer dot path (QuantizeActivation + dot_row_q8) of every backend:
// activation blocks identical to the reference's, dots equal to the
// reference's within float rounding (the block sums are exact integers),
// and within the derived quantization bound of the double-precision dot of
// the dequantized weights with the original float x.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::LoadRow;
using testing::RandomVector;
using testing::StoreRow;
using testing::TypeName;

std::vector<BlockQ8Act> Quantize(const KernelTable& table, const std::vector<float>& x) {
  std::vector<BlockQ8Act> xq(x.size() / 32);
  table.quantize_act(x.data(), xq.data(), static_cast<int64_t>(x.size()));
  return xq;
}

TEST(DotQ8Test, ActivationBlocksEqualTheReference) {
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t n : {32, 96, 32 * 37, 4096 + 32}) {
      for (float scale : {1.0f, 1e-3f, 300.0f}) {
        std::vector<float> x = RandomVector(n, static_cast<uint32_t>(n), -scale, scale);
        // Exact ties (x * id = k + 0.5) and an all-zero block.
        x[1] = x[0] / 127.0f * 2.5f;
        if (n >= 64) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
        const std::vector<BlockQ8Act> want = Quantize(RefKernels(), x);
        const std::vector<BlockQ8Act> got = Quantize(*table, x);
        for (size_t b = 0; b < want.size(); ++b) {
          EXPECT_EQ(got[b].d, want[b].d) << table->name << " n=" << n << " block " << b;
          int32_t sum = 0;
          for (int8_t q : want[b].qs) sum += q;
          EXPECT_EQ(want[b].sum, sum) << "n=" << n << " block " << b;
          EXPECT_EQ(got[b].sum, want[b].sum) << table->name << " n=" << n << " block " << b;
          EXPECT_EQ(std::memcmp(got[b].qs, want[b].qs, 32), 0)
              << table->name << " n=" << n << " scale=" << scale << " block " << b;
        }
      }
    }
  }
}

TEST(DotQ8Test, QuantizationErrorIsAtMostHalfAStep) {
  const std::vector<float> x = RandomVector(32 * 41, 17, -3.0f, 3.0f);
  const std::vector<BlockQ8Act> xq = Quantize(RefKernels(), x);
  for (size_t i = 0; i < x.size(); ++i) {
    const BlockQ8Act& block = xq[i / 32];
    EXPECT_LE(std::fabs(x[i] - static_cast<double>(block.d) * block.qs[i % 32]),
              block.d / 2 + FLT_EPSILON * std::fabs(x[i]))
        << "i=" << i;
  }
}

void CheckDotQ8(const KernelTable& table, TensorType type, int64_t n, uint32_t seed,
                float x_scale) {
  const std::vector<float> w_values = RandomVector(n, seed);
  const std::vector<float> x = RandomVector(n, seed + 1000, -x_scale, x_scale);
  const std::vector<uint8_t> row = StoreRow(type, w_values);
  const std::vector<float> w = LoadRow(type, row, n);
  const std::vector<BlockQ8Act> xq = Quantize(RefKernels(), x);
  const std::string shape = std::string("backend=") + table.name + " type=" + TypeName(type) +
                            " n=" + std::to_string(n) + " seed=" + std::to_string(seed) +
                            " x_scale=" + std::to_string(x_scale);
  const float got = table.For(type).dot_row_q8(row.data(), xq.data(), n);

  // Against the reference: the same exact integer block sums, scaled by the
  // same float d_w * d_x; only the order of the float additions differs.
  double sum_terms = 0.0, exact_q = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double term = static_cast<double>(w[i]) * xq[i / 32].d * xq[i / 32].qs[i % 32];
    sum_terms += std::fabs(term);
    exact_q += term;
  }
  const float want = RefKernels().For(type).dot_row_q8(row.data(), xq.data(), n);
  const double rounding = FLT_EPSILON * (static_cast<double>(n) / 32 + 16) * sum_terms;
  EXPECT_NEAR(got, want, 2 * rounding) << shape;
  EXPECT_NEAR(got, exact_q, rounding) << shape;

  // Against the original float x: the activation's quantization error too.
  double exact = 0.0;
  for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(w[i]) * x[i];
  EXPECT_NEAR(got, exact, testing::Q8DotTolerance(w.data(), x.data(), xq.data(), n)) << shape;
}

TEST(DotQ8Test, MatchesReferenceAndDoubleDotOnOddBlockCounts) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kQ8_0, TensorType::kQ4_0}) {
      ASSERT_NE(table->For(type).dot_row_q8, nullptr) << table->name;
      for (int64_t n : {32, 64, 96, 32 * 37, 4096 + 32, 11008}) {
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n), 1.0f);
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n) + 1, 1e-3f);
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n) + 2, 50.0f);
      }
    }
    for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kBF16}) {
      EXPECT_EQ(table->For(type).dot_row_q8, nullptr) << table->name << " " << TypeName(type);
    }
  }
}

// Extreme codes: w = -8 (q4_0) / +-127 (q8_0) against x = +-127 in every
// position, where the int16 pair sums of maddubs come closest to overflow.
TEST(DotQ8Test, ExtremeCodesDoNotOverflow) {
  const int64_t n = 64;
  std::vector<float> x(n), w(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (i % 3 == 0) ? -1.0f : 1.0f;
    w[i] = (i % 5 == 0) ? 1.0f : -1.0f;
  }
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kQ8_0, TensorType::kQ4_0}) {
      const std::vector<uint8_t> row = StoreRow(type, w);
      const std::vector<BlockQ8Act> xq = Quantize(*table, x);
      const float want = RefKernels().For(type).dot_row_q8(row.data(), xq.data(), n);
      EXPECT_EQ(table->For(type).dot_row_q8(row.data(), xq.data(), n), want)
          << table->name << " " << TypeName(type);
    }
  }
}

TEST(DotQ8Test, ZeroLengthIsZero) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kQ8_0, TensorType::kQ4_0}) {
      EXPECT_EQ(table->For(type).dot_row_q8(nullptr, nullptr, 0), 0.0f) << table->name;
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
