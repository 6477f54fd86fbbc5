#include "kernels/matvec.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "kernels/quant.h"
#include "kernels/test_util.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

using testing::AllTypes;
using testing::LoadRow;
using testing::RandomVector;
using testing::StoreRow;
using testing::TypeName;

TEST(MatVecTest, EqualsPerRowDotAndDoubleReferenceForAnyThreadCount) {
  ThreadPool pool1(1), pool2(2), pool3(3);
  for (TensorType type : AllTypes()) {
    const int64_t cols = TraitsOf(type).block_size == 256 ? 512 : 96;
    for (int64_t rows : {1, 2, 3, 37}) {
      const std::vector<float> w_values = RandomVector(rows * cols, static_cast<uint32_t>(rows));
      const std::vector<float> x = RandomVector(cols, 99);
      const std::vector<uint8_t> w = StoreRow(type, w_values);  // rows are contiguous
      const std::vector<float> w_deq = LoadRow(type, w, rows * cols);
      const size_t row_bytes = RowBytes(type, cols);

      std::vector<float> y_caller(rows, -1.0f);
      MatVec(type, w.data(), rows, cols, x.data(), y_caller.data(), nullptr);
      for (int64_t r = 0; r < rows; ++r) {
        const std::string shape = std::string("type=") + TypeName(type) +
                                  " rows=" + std::to_string(rows) + " r=" + std::to_string(r);
        double exact = 0.0, sum_abs = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
          exact += static_cast<double>(w_deq[r * cols + c]) * x[c];
          sum_abs += std::fabs(static_cast<double>(w_deq[r * cols + c]) * x[c]);
        }
        const std::vector<double> min_term = testing::MinTermBound(
            type, std::vector<uint8_t>(w.begin() + r * row_bytes, w.begin() + (r + 1) * row_bytes),
            cols);
        if (HasDotRowQ8(type)) {
          // Integer dot against x quantized once per call.
          std::vector<BlockQ8Act> xq(cols / 32);
          QuantizeActivation(x.data(), xq.data(), cols);
          EXPECT_EQ(y_caller[r], DotRowQ8(type, w.data() + r * row_bytes, xq.data(), cols))
              << shape;
          EXPECT_NEAR(
              y_caller[r], exact,
              testing::IntDotTolerance(&w_deq[r * cols], x.data(), xq.data(), cols, min_term))
              << shape;
        } else if (HasDotRowQ8K(type)) {
          std::vector<BlockQ8KAct> xq(cols / 256);
          QuantizeActivationK(x.data(), xq.data(), cols);
          EXPECT_EQ(y_caller[r], DotRowQ8K(type, w.data() + r * row_bytes, xq.data(), cols))
              << shape;
          EXPECT_NEAR(
              y_caller[r], exact,
              testing::IntDotTolerance(&w_deq[r * cols], x.data(), xq.data(), cols, min_term))
              << shape;
        } else {
          // MatMul's tile order, not DotRow's: both within float rounding.
          EXPECT_NEAR(y_caller[r], DotRow(type, w.data() + r * row_bytes, x.data(), cols),
                      2 * FLT_EPSILON * (cols / 8.0 + 16) * sum_abs)
              << shape;
          EXPECT_NEAR(y_caller[r], exact, FLT_EPSILON * (cols / 8.0 + 16) * sum_abs) << shape;
        }
      }
      for (ThreadPool* pool : {&pool1, &pool2, &pool3}) {
        std::vector<float> y(rows, -1.0f);
        MatVec(type, w.data(), rows, cols, x.data(), y.data(), pool);
        EXPECT_EQ(y, y_caller) << "type=" << TypeName(type) << " rows=" << rows
                               << " threads=" << pool->size();
      }
    }
  }
}

// Past the stack buffer (16384 columns) the quantized x goes to a
// thread-local buffer; results must not change in kind.
TEST(MatVecTest, WideRowsUseTheFallbackBuffer) {
  const int64_t rows = 3, cols = 16384 + 256;
  ThreadPool pool(2);
  for (TensorType type : {TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kQ4_K}) {
    const std::vector<float> w_values = RandomVector(rows * cols, 5);
    const std::vector<float> x = RandomVector(cols, 6);
    const std::vector<uint8_t> w = StoreRow(type, w_values);
    std::vector<BlockQ8Act> xq(cols / 32);
    QuantizeActivation(x.data(), xq.data(), cols);
    std::vector<BlockQ8KAct> xqk(cols / 256);
    QuantizeActivationK(x.data(), xqk.data(), cols);
    std::vector<float> y(rows);
    MatVec(type, w.data(), rows, cols, x.data(), y.data(), &pool);
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* row = w.data() + r * RowBytes(type, cols);
      EXPECT_EQ(y[r], HasDotRowQ8(type) ? DotRowQ8(type, row, xq.data(), cols)
                                        : DotRowQ8K(type, row, xqk.data(), cols))
          << TypeName(type) << " r=" << r;
    }
  }
}

TEST(MatVecTest, ZeroRowsWritesNothing) {
  ThreadPool pool(2);
  const std::vector<float> x(32, 1.0f);
  float y = 42.0f;
  MatVec(TensorType::kQ8_0, nullptr, 0, 32, x.data(), &y, &pool);
  EXPECT_EQ(y, 42.0f);
}

}  // namespace
}  // namespace h2o::kernels
