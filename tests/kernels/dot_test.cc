// DotRow of every type and backend against a double-precision dot product
// of the dequantized weights, over random data and odd sizes.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::AllTypes;
using testing::LoadRow;
using testing::RandomVector;
using testing::StoreRow;
using testing::TypeName;

// Worst-case float summation error for a dot product computed with 8
// partial sums: each lane adds about n/8 products, then 3 pairwise adds,
// then (quantized) one scale multiply and a running sum over n/32 blocks.
// Each step costs at most one rounding of the running magnitude, which is
// bounded by sum |w x|.
double DotTolerance(int64_t n, double sum_abs) {
  return FLT_EPSILON * (static_cast<double>(n) / 8 + 16) * sum_abs;
}

void CheckDot(const KernelTable& table, TensorType type, int64_t n, uint32_t seed, float x_scale) {
  const std::vector<float> w_values = RandomVector(n, seed);
  std::vector<float> x = RandomVector(n, seed + 1000, -x_scale, x_scale);
  const std::vector<uint8_t> row = StoreRow(type, w_values);
  const std::vector<float> w = LoadRow(type, row, n);
  double exact = 0.0;
  double sum_abs = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    // float * float is exact in double, so only the final sum rounds (at 2^-53).
    exact += static_cast<double>(w[i]) * x[i];
    sum_abs += std::fabs(static_cast<double>(w[i]) * x[i]);
  }
  const float got = table.For(type).dot_row(row.data(), x.data(), n);
  EXPECT_NEAR(got, exact, DotTolerance(n, sum_abs))
      << "backend=" << table.name << " type=" << TypeName(type) << " n=" << n << " seed=" << seed
      << " x_scale=" << x_scale << " sum|wx|=" << sum_abs;
}

TEST(DotRowTest, FloatTypesMatchDoubleReferenceOnOddSizes) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kBF16}) {
      for (int64_t n : {1, 2, 7, 8, 9, 33, 1023, 4096 + 32}) {
        CheckDot(*table, type, n, static_cast<uint32_t>(n), 1.0f);
        CheckDot(*table, type, n, static_cast<uint32_t>(n) + 1, 1000.0f);
      }
    }
  }
}

TEST(DotRowTest, QuantizedTypesMatchDoubleReference) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : testing::Q8Types()) {
      for (int64_t n : {32, 64, 96, 32 * 37, 4096 + 32, 11008}) {
        CheckDot(*table, type, n, static_cast<uint32_t>(n), 1.0f);
        CheckDot(*table, type, n, static_cast<uint32_t>(n) + 1, 1e-3f);
      }
    }
    for (TensorType type : testing::KTypes()) {
      for (int64_t n : {256, 512, 256 * 9, 2048, 5632}) {
        CheckDot(*table, type, n, static_cast<uint32_t>(n), 1.0f);
        CheckDot(*table, type, n, static_cast<uint32_t>(n) + 1, 1e-3f);
      }
    }
  }
}

// With all products positive there is no cancellation, so the tolerance
// above is a tight relative bound here: 1e-5 of the result at n = 4128
// (4352 for the K-quants, whole super-blocks).
TEST(DotRowTest, NoCancellationGivesSmallRelativeError) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      const int64_t n = testing::WholeBlocks(type, 4096 + 32);
      const std::vector<float> w_values = RandomVector(n, 5, 0.5f, 1.0f);
      const std::vector<float> x = RandomVector(n, 6, 0.5f, 1.0f);
      const std::vector<uint8_t> row = StoreRow(type, w_values);
      const std::vector<float> w = LoadRow(type, row, n);
      double exact = 0.0;
      for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(w[i]) * x[i];
      const float got = table->For(type).dot_row(row.data(), x.data(), n);
      EXPECT_LE(std::fabs(got - exact), 1e-5 * exact)
          << "backend=" << table->name << " type=" << TypeName(type) << " n=" << n;
    }
  }
}

TEST(DotRowTest, ZeroLengthIsZero) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      EXPECT_EQ(table->For(type).dot_row(nullptr, nullptr, 0), 0.0f)
          << table->name << " " << TypeName(type);
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
