// The attention row kernels (ScoreRows, WeightedSumRows) of every backend
// against a double-precision sum written here, over head sizes with and
// without a remainder past the vector width and run lengths around the
// 4-row blocking. Tolerances follow the dot-product bound of dot_test.cc:
// a float sum of m products is within about FLT_EPSILON * (m/8 + 16) *
// sum|terms| of the exact value.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::RandomVector;

std::string Shape(const KernelTable& t, TensorType type, int64_t d, int64_t n_rows) {
  return std::string("backend=") + t.name + " type=" + testing::TypeName(type) +
         " d=" + std::to_string(d) + " rows=" + std::to_string(n_rows);
}

struct Rows {
  std::vector<uint8_t> bytes;
  std::vector<float> values;  // what the rows hold, widened
};

Rows MakeRows(TensorType type, int64_t n_rows, int64_t d, uint32_t seed) {
  const std::vector<float> src = RandomVector(n_rows * d, seed);
  Rows rows{std::vector<uint8_t>(RowBytes(type, d) * n_rows), std::vector<float>(src.size())};
  for (int64_t r = 0; r < n_rows; ++r) {
    QuantizeRow(type, &src[r * d], rows.bytes.data() + r * RowBytes(type, d), d);
    DequantizeRow(type, rows.bytes.data() + r * RowBytes(type, d), &rows.values[r * d], d);
  }
  return rows;
}

constexpr int64_t kHeadDims[] = {1, 7, 8, 20, 64, 72, 128, 131};
constexpr int64_t kRunLengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 33};

TEST(KvRowKernels, ScoreRowsMatchDoubleSums) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kF32, TensorType::kF16}) {
      for (int64_t d : kHeadDims) {
        for (int64_t n_rows : kRunLengths) {
          const Rows k = MakeRows(type, n_rows, d, static_cast<uint32_t>(d * 100 + n_rows));
          const std::vector<float> q = RandomVector(d, static_cast<uint32_t>(d + n_rows), -2.0f, 2.0f);
          const float scale = 0.125f;
          std::vector<float> out(n_rows + 1, 42.0f);
          table->KvFor(type).score_rows(q.data(), k.bytes.data(), n_rows, d, scale, out.data());
          for (int64_t r = 0; r < n_rows; ++r) {
            double want = 0.0, sum_abs = 0.0;
            for (int64_t i = 0; i < d; ++i) {
              want += static_cast<double>(q[i]) * k.values[r * d + i];
              sum_abs += std::fabs(static_cast<double>(q[i]) * k.values[r * d + i]);
            }
            const double tol = FLT_EPSILON * (static_cast<double>(d) / 8 + 16) * sum_abs * scale;
            ASSERT_NEAR(out[r], want * scale, tol) << Shape(*table, type, d, n_rows) << " row " << r;
          }
          EXPECT_EQ(out[n_rows], 42.0f) << "wrote past the run: " << Shape(*table, type, d, n_rows);
        }
      }
    }
  }
}

TEST(KvRowKernels, WeightedSumRowsAddToTheOutput) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : {TensorType::kF32, TensorType::kF16}) {
      for (int64_t d : kHeadDims) {
        for (int64_t n_rows : kRunLengths) {
          const Rows v = MakeRows(type, n_rows, d, static_cast<uint32_t>(d * 31 + n_rows));
          const std::vector<float> p = RandomVector(n_rows, static_cast<uint32_t>(n_rows + 5), 0.0f, 1.0f);
          const std::vector<float> start = RandomVector(d, static_cast<uint32_t>(d + 9));
          std::vector<float> out = start;
          out.push_back(42.0f);
          table->KvFor(type).weighted_sum_rows(p.data(), v.bytes.data(), n_rows, d, out.data());
          for (int64_t i = 0; i < d; ++i) {
            double want = start[i], sum_abs = std::fabs(start[i]);
            for (int64_t r = 0; r < n_rows; ++r) {
              want += static_cast<double>(p[r]) * v.values[r * d + i];
              sum_abs += std::fabs(static_cast<double>(p[r]) * v.values[r * d + i]);
            }
            const double tol = FLT_EPSILON * (static_cast<double>(n_rows) / 8 + 16) * sum_abs;
            ASSERT_NEAR(out[i], want, tol) << Shape(*table, type, d, n_rows) << " column " << i;
          }
          EXPECT_EQ(out[d], 42.0f) << "wrote past the row: " << Shape(*table, type, d, n_rows);
        }
      }
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
