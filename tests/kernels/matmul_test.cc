#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/matvec.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

// A batch must equal the same rows applied token by token, bit for bit:
// the quantized types run the same integer dot on the same quantized x in
// the reference's order (or, for the K-quants, the backend's row dot
// itself), the floats the same tile order as MatVec. Every token count
// from 1 to 64 and two larger, on row counts that split unevenly over the
// threads (70 rows: two ranges of 32 on 2 threads), and against the
// double-precision product within the bound of MatVec's contract.
TEST(MatMul, EqualsPerTokenMatVecAtEveryTokenCount) {
  ThreadPool pool2(2), pool3(3);
  std::vector<int64_t> counts;
  for (int64_t n = 1; n <= 64; ++n) counts.push_back(n);
  counts.push_back(100);
  counts.push_back(512);
  for (TensorType type : testing::AllTypes()) {
    const int64_t cols = TraitsOf(type).block_size == 256 ? 512 : 96;
    const size_t row_bytes = RowBytes(type, cols);
    for (int64_t rows : {37, 70}) {
      const std::vector<float> wf = testing::RandomVector(rows * cols, static_cast<uint32_t>(rows));
      const std::vector<uint8_t> w = testing::StoreRow(type, wf);
      const std::vector<float> w_deq = testing::LoadRow(type, w, rows * cols);
      const std::vector<float> x = testing::RandomVector(512 * cols, 7);
      std::vector<float> want(512 * rows);
      for (int64_t t = 0; t < 512; ++t) {
        MatVec(type, w.data(), rows, cols, &x[t * cols], &want[t * rows], nullptr);
      }
      for (int64_t n : counts) {
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
          const int threads = pool == nullptr ? 1 : pool->size();
          std::vector<float> y(n * rows, -1.0f), scratch(MatMulScratchFloats(cols, n, threads));
          MatMul(type, w.data(), rows, cols, x.data(), n, y.data(), scratch.data(), pool);
          for (int64_t i = 0; i < n * rows; ++i) {
            ASSERT_EQ(y[i], want[i])
                << testing::TypeName(type) << " rows " << rows << " n " << n << " threads "
                << threads << " t " << i / rows << " r " << i % rows;
          }
        }
      }
      for (int64_t t : {0, 511}) {
        for (int64_t r = 0; r < rows; ++r) {
          double exact = 0, magnitude = 0;
          for (int64_t i = 0; i < cols; ++i) {
            exact += double(w_deq[r * cols + i]) * x[t * cols + i];
            magnitude += std::abs(double(w_deq[r * cols + i]) * x[t * cols + i]);
          }
          double bound = FLT_EPSILON * (cols / 8.0 + 16) * magnitude;
          const std::vector<uint8_t> row(w.begin() + r * row_bytes,
                                         w.begin() + (r + 1) * row_bytes);
          if (HasDotRowQ8(type)) {
            std::vector<BlockQ8Act> xq(cols / 32);
            QuantizeActivation(&x[t * cols], xq.data(), cols);
            bound = testing::IntDotTolerance(&w_deq[r * cols], &x[t * cols], xq.data(), cols,
                                             testing::MinTermBound(type, row, cols));
          } else if (HasDotRowQ8K(type)) {
            std::vector<BlockQ8KAct> xq(cols / 256);
            QuantizeActivationK(&x[t * cols], xq.data(), cols);
            bound = testing::IntDotTolerance(&w_deq[r * cols], &x[t * cols], xq.data(), cols,
                                             testing::MinTermBound(type, row, cols));
          }
          EXPECT_NEAR(want[t * rows + r], exact, bound) << testing::TypeName(type) << " r " << r;
        }
      }
    }
  }
}

// Weights packed once into the active backend's panels give MatMul's y
// bit for bit at every token count, one token (decode) included, whatever
// the threads.
TEST(MatMul, PanelsEqualTheRows) {
  ThreadPool pool2(2), pool3(3);
  int offered = 0;
  for (TensorType type : testing::AllTypes()) {
    if (!PanelsOffered(type)) continue;
    ++offered;
    const int64_t cols = 96;
    for (int64_t rows : {37, 70, 129}) {
      const std::vector<float> wf = testing::RandomVector(rows * cols, static_cast<uint32_t>(rows));
      const std::vector<uint8_t> w = testing::StoreRow(type, wf);
      std::vector<uint8_t> panels(PanelsBytes(type, rows, cols));
      PackPanels(type, w.data(), rows, cols, panels.data(), &pool3);
      const std::vector<float> x = testing::RandomVector(100 * cols, 9);
      for (int64_t n : {1, 2, 7, 32, 33, 100}) {
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
          const int threads = pool == nullptr ? 1 : pool->size();
          std::vector<float> want(n * rows), got(n * rows, -1.0f);
          std::vector<float> scratch(MatMulScratchFloats(cols, n, threads));
          MatMul(type, w.data(), rows, cols, x.data(), n, want.data(), scratch.data(), pool);
          MatMulPanels(type, panels.data(), rows, cols, x.data(), n, got.data(), scratch.data(),
                       pool);
          for (int64_t i = 0; i < n * rows; ++i) {
            ASSERT_EQ(got[i], want[i]) << testing::TypeName(type) << " rows " << rows << " n " << n
                                       << " threads " << threads << " i " << i;
          }
        }
      }
    }
  }
  if (offered == 0) GTEST_SKIP() << "the active backend packs no panels";
}

// Each row read back out of the panels is the row as stored, byte for byte,
// the rows of a partial last panel included.
TEST(MatMul, PanelRowsUnpackToTheStoredRows) {
  int offered = 0;
  for (TensorType type : testing::AllTypes()) {
    if (!PanelsOffered(type)) continue;
    ++offered;
    const int64_t cols = 128;
    const size_t row_bytes = RowBytes(type, cols);
    for (int64_t rows : {1, 31, 70}) {
      const std::vector<uint8_t> w =
          testing::StoreRow(type, testing::RandomVector(rows * cols, static_cast<uint32_t>(rows)));
      std::vector<uint8_t> panels(PanelsBytes(type, rows, cols));
      PackPanels(type, w.data(), rows, cols, panels.data(), nullptr);
      std::vector<uint8_t> row(row_bytes + 1, 0xA5);
      for (int64_t r = 0; r < rows; ++r) {
        UnpackPanelRow(type, panels.data(), r, cols, row.data());
        ASSERT_TRUE(std::equal(row.begin(), row.begin() + row_bytes, w.begin() + r * row_bytes))
            << testing::TypeName(type) << " rows " << rows << " row " << r;
        ASSERT_EQ(row[row_bytes], 0xA5) << "wrote past the row";
      }
    }
  }
  if (offered == 0) GTEST_SKIP() << "the active backend packs no panels";
}

// Products sharing one input give each product's MatMul / MatMulPanels y
// bit for bit (bias added, wider output rows left alone), and `after` sees
// every row exactly once, on rows whose products are already done.
TEST(MatMul, SharedProductsEqualTheirOwnProducts) {
  ThreadPool pool2(2), pool3(3);
  const int64_t cols = 64;
  const int64_t rows = 70;  // 32 + 38 on 2 threads: a share ends mid-panel
  const std::vector<float> x = testing::RandomVector(40 * cols, 5);
  const std::vector<float> bias = testing::RandomVector(rows, 6);
  for (TensorType type :
       {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0, TensorType::kQ4_0}) {
    for (bool panels : {false, true}) {
      if (panels && !PanelsOffered(type)) continue;
      std::vector<std::vector<uint8_t>> w;
      for (uint32_t seed : {1u, 2u}) {
        std::vector<uint8_t> stored =
            testing::StoreRow(type, testing::RandomVector(rows * cols, seed));
        if (panels) {
          std::vector<uint8_t> packed(PanelsBytes(type, rows, cols));
          PackPanels(type, stored.data(), rows, cols, packed.data(), nullptr);
          stored = std::move(packed);
        }
        w.push_back(std::move(stored));
      }
      for (int64_t n : {1, 3, 32, 40}) {
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
          const int threads = pool == nullptr ? 1 : pool->size();
          std::vector<float> scratch(MatMulScratchFloats(cols, n, threads));
          std::vector<float> want[2];
          for (int i = 0; i < 2; ++i) {
            want[i].assign(n * rows, 0.0f);
            if (panels) {
              MatMulPanels(type, w[i].data(), rows, cols, x.data(), n, want[i].data(),
                           scratch.data(), pool);
            } else {
              MatMul(type, w[i].data(), rows, cols, x.data(), n, want[i].data(), scratch.data(),
                     pool);
            }
          }
          for (int64_t t = 0; t < n; ++t) {
            for (int64_t r = 0; r < rows; ++r) want[1][t * rows + r] += bias[r];
          }
          const int64_t stride = rows + 3;
          std::vector<float> got[2] = {std::vector<float>(n * stride, -5.0f),
                                       std::vector<float>(n * stride, -5.0f)};
          const SharedProduct products[] = {
              {w[0].data(), rows, got[0].data(), stride, nullptr},
              {w[1].data(), rows, got[1].data(), stride, bias.data()}};
          std::vector<int> seen(rows, 0);
          bool done_before_after = true;
          auto after = [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              ++seen[r];
              for (int64_t t = 0; t < n; ++t) {
                done_before_after = done_before_after &&
                                    got[0][t * stride + r] == want[0][t * rows + r] &&
                                    got[1][t * stride + r] == want[1][t * rows + r];
              }
            }
          };
          const RangeFn after_fn(after);
          MatMulShared(type, panels, products, cols, x.data(), n, scratch.data(), pool, &after_fn);
          const std::string where = std::string(testing::TypeName(type)) +
                                    (panels ? " panels" : " rows") + " n " + std::to_string(n) +
                                    " threads " + std::to_string(threads);
          for (int i = 0; i < 2; ++i) {
            for (int64_t t = 0; t < n; ++t) {
              for (int64_t r = 0; r < stride; ++r) {
                const float expected = r < rows ? want[i][t * rows + r] : -5.0f;
                ASSERT_EQ(got[i][t * stride + r], expected) << where << " product " << i;
              }
            }
          }
          for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(seen[r], 1) << where << " row " << r;
          EXPECT_TRUE(done_before_after) << where;
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
