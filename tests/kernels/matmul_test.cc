#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/matvec.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

// A batch must equal the same rows applied token by token: the float types
// reduce each row with the active float dot (f16/bf16 dequantized first in
// the batch), so compare with a tolerance relative to sum |w x|; the
// quantized types use the same integer dot on the same quantized x, so they
// are identical.
TEST(MatMul, EqualsPerTokenMatVec) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (TensorType type : testing::AllTypes()) {
    for (int threads : {1, 2, 3}) {
      const int64_t rows = 37, n = 5;
      const int64_t cols = TraitsOf(type).block_size == 256 ? 512 : 96;
      std::vector<float> wf(rows * cols), x(n * cols);
      for (float& v : wf) v = uni(rng);
      for (float& v : x) v = uni(rng);
      std::vector<uint8_t> w(RowBytes(type, cols) * rows);
      for (int64_t r = 0; r < rows; ++r) {
        QuantizeRow(type, &wf[r * cols], &w[r * RowBytes(type, cols)], cols);
      }
      ThreadPool pool(threads);
      std::vector<float> y(n * rows), scratch(MatMulScratchFloats(cols, n, threads));
      MatMul(type, w.data(), rows, cols, x.data(), n, y.data(), scratch.data(), &pool);
      std::vector<float> deq(cols);
      for (int64_t t = 0; t < n; ++t) {
        std::vector<float> want(rows);
        MatVec(type, w.data(), rows, cols, &x[t * cols], want.data(), nullptr);
        for (int64_t r = 0; r < rows; ++r) {
          DequantizeRow(type, &w[r * RowBytes(type, cols)], deq.data(), cols);
          double magnitude = 0;
          for (int64_t i = 0; i < cols; ++i) magnitude += std::abs(double(deq[i]) * x[t * cols + i]);
          EXPECT_NEAR(y[t * rows + r], want[r], 1e-5 * magnitude + 1e-6)
              << TraitsOf(type).name << " threads " << threads << " t " << t << " r " << r;
          if (HasDotRowQ8(type) || HasDotRowQ8K(type)) {
            EXPECT_EQ(y[t * rows + r], want[r])
                << TraitsOf(type).name << " threads " << threads << " t " << t << " r " << r;
          }
        }
      }
    }
  }
}

// Every backend's register-blocked product against a double dot, over
// shapes that leave every kind of remainder (rows, tokens, columns).
TEST(GemmF32, EveryBackendMatchesDoubleDot) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t rows : {1, 2, 3, 5}) {
      for (int64_t n : {1, 3, 4, 5, 9}) {
        for (int64_t cols : {1, 7, 8, 9, 31, 40, 129}) {
          std::vector<float> w(rows * cols), x(n * cols);
          for (float& v : w) v = uni(rng);
          for (float& v : x) v = uni(rng);
          const int64_t ldy = rows + 2;  // a wider output row, as in a slice of a batch
          std::vector<float> y(n * ldy, -7.0f);
          table->gemm_f32(w.data(), rows, x.data(), n, cols, y.data(), ldy);
          for (int64_t t = 0; t < n; ++t) {
            for (int64_t r = 0; r < ldy; ++r) {
              if (r >= rows) {
                EXPECT_EQ(y[t * ldy + r], -7.0f) << "wrote outside the rows";
                continue;
              }
              double want = 0, magnitude = 0;
              for (int64_t i = 0; i < cols; ++i) {
                want += double(w[r * cols + i]) * x[t * cols + i];
                magnitude += std::abs(double(w[r * cols + i]) * x[t * cols + i]);
              }
              EXPECT_NEAR(y[t * ldy + r], want, 4 * FLT_EPSILON * (cols / 8 + 8) * magnitude)
                  << table->name << " rows " << rows << " n " << n << " cols " << cols;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
