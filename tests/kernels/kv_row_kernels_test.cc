// The attention row kernels (ScoreRows, WeightedSumRows) of every backend
// against a double-precision sum written here, over head sizes with and
// without a remainder past the vector width, run lengths around the 4-row
// blocking and query-head groups around the 4-head (scores) and 8-head
// (weighted sums) blocking; q8_0 scores (a query rounded to 8 bits) within
// that rounding's bound as well. Tolerances follow the dot-product bound of dot_test.cc:
// a float sum of m products is within about FLT_EPSILON * (m/8 + 16) *
// sum|terms| of the exact value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::RandomVector;

std::string Shape(const KernelTable& t, TensorType type, int64_t d, int64_t n_rows, int64_t n_q) {
  return std::string("backend=") + t.name + " type=" + testing::TypeName(type) +
         " d=" + std::to_string(d) + " rows=" + std::to_string(n_rows) +
         " heads=" + std::to_string(n_q);
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
constexpr int64_t kGroupSizes[] = {1, 2, 3, 4, 5, 8, 11};
// Block types need whole 32-element blocks; 288 spans more than one of the
// 256-element pieces the weighted sums widen at a time.
constexpr int64_t kBlockHeadDims[] = {32, 64, 96, 128, 288};

std::span<const int64_t> HeadDimsFor(TensorType type) {
  if (TraitsOf(type).block_size == 1) return kHeadDims;
  return kBlockHeadDims;
}

TEST(KvRowKernels, ScoreRowsMatchDoubleSums) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : KvRowTypes()) {
      for (int64_t d : HeadDimsFor(type)) {
        for (int64_t n_rows : kRunLengths) {
          for (int64_t n_q : kGroupSizes) {
            const Rows k = MakeRows(type, n_rows, d, static_cast<uint32_t>(d * 100 + n_rows));
            const std::vector<float> q =
                RandomVector(n_q * d, static_cast<uint32_t>(d + n_rows + n_q), -2.0f, 2.0f);
            const float scale = 0.125f;
            const int64_t stride = n_rows + 3;  // a gap after each head's scores
            std::vector<float> out(n_q * stride, 42.0f);
            table->KvFor(type).score_rows(q.data(), n_q, k.bytes.data(), n_rows, d, scale,
                                          out.data(), stride);
            for (int64_t h = 0; h < n_q; ++h) {
              for (int64_t r = 0; r < n_rows; ++r) {
                double want = 0.0, sum_abs = 0.0, query_rounding = 0.0;
                for (int64_t i = 0; i < d; ++i) {
                  const double term = static_cast<double>(q[h * d + i]) * k.values[r * d + i];
                  want += term;
                  sum_abs += std::fabs(term);
                }
                if (type == TensorType::kQ8_0) {
                  // The query is rounded to 8 bits per block of 32 (step
                  // max |q| / 127): each value moves by at most half a step.
                  for (int64_t b = 0; b < d; b += 32) {
                    double max_abs = 0.0, k_abs = 0.0;
                    for (int64_t i = b; i < b + 32; ++i) {
                      max_abs = std::max(max_abs, std::fabs(static_cast<double>(q[h * d + i])));
                      k_abs += std::fabs(static_cast<double>(k.values[r * d + i]));
                    }
                    query_rounding += k_abs * max_abs / 127 / 2;
                  }
                }
                const double tol =
                    (FLT_EPSILON * (static_cast<double>(d) / 8 + 16) * (sum_abs + query_rounding) +
                     query_rounding * (1 + 1e-6)) *
                    scale;
                ASSERT_NEAR(out[h * stride + r], want * scale, tol)
                    << Shape(*table, type, d, n_rows, n_q) << " head " << h << " row " << r;
              }
              for (int64_t r = n_rows; r < stride; ++r) {
                ASSERT_EQ(out[h * stride + r], 42.0f)
                    << "wrote past the run: " << Shape(*table, type, d, n_rows, n_q);
              }
            }
          }
        }
      }
    }
  }
}

TEST(KvRowKernels, WeightedSumRowsAddToTheOutput) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : KvRowTypes()) {
      for (int64_t d : HeadDimsFor(type)) {
        for (int64_t n_rows : kRunLengths) {
          for (int64_t n_q : kGroupSizes) {
            const Rows v = MakeRows(type, n_rows, d, static_cast<uint32_t>(d * 31 + n_rows));
            const int64_t p_stride = n_rows + 2;
            const std::vector<float> p =
                RandomVector(n_q * p_stride, static_cast<uint32_t>(n_rows + 5 + n_q), 0.0f, 1.0f);
            const std::vector<float> start =
                RandomVector(n_q * d, static_cast<uint32_t>(d + 9 + n_q));
            std::vector<float> out = start;
            out.push_back(42.0f);
            table->KvFor(type).weighted_sum_rows(p.data(), p_stride, n_q, v.bytes.data(), n_rows, d,
                                                 out.data());
            for (int64_t h = 0; h < n_q; ++h) {
              for (int64_t i = 0; i < d; ++i) {
                double want = start[h * d + i], sum_abs = std::fabs(start[h * d + i]);
                for (int64_t r = 0; r < n_rows; ++r) {
                  const double term =
                      static_cast<double>(p[h * p_stride + r]) * v.values[r * d + i];
                  want += term;
                  sum_abs += std::fabs(term);
                }
                const double tol = FLT_EPSILON * (static_cast<double>(n_rows) / 8 + 16) * sum_abs;
                ASSERT_NEAR(out[h * d + i], want, tol)
                    << Shape(*table, type, d, n_rows, n_q) << " head " << h << " column " << i;
              }
            }
            EXPECT_EQ(out[n_q * d], 42.0f)
                << "wrote past the output: " << Shape(*table, type, d, n_rows, n_q);
          }
        }
      }
    }
  }
}

// The per-head results do not depend on how many heads share a call: n_q
// heads at once give, bit for bit, what n_q one-head calls give. Decode
// attention calls with a GQA group and prefill attention
// (AttendGroupChunk) with a block of queries times the group, and equal
// results between the two rest on this. Run lengths straddle the 4-row
// blocking and the row tiles that groups of more than 4 heads take.
TEST(KvRowKernels, ManyHeadsEqualOneHeadAtATime) {
  constexpr int64_t kManyHeads[] = {2, 3, 5, 8, 9, 33, 64};
  constexpr int64_t kLongRuns[] = {1, 5, 32, 33, 65, 130};
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : KvRowTypes()) {
      const KvRowKernels& kv = table->KvFor(type);
      for (int64_t d : {20, 64, 128}) {
        if (d % TraitsOf(type).block_size != 0) continue;
        for (int64_t n_rows : kLongRuns) {
          for (int64_t n_q : kManyHeads) {
            const Rows rows = MakeRows(type, n_rows, d, static_cast<uint32_t>(d * 7 + n_rows));
            const std::vector<float> q =
                RandomVector(n_q * d, static_cast<uint32_t>(n_q + n_rows), -2.0f, 2.0f);
            std::vector<float> scores(n_q * n_rows), one(n_rows);
            kv.score_rows(q.data(), n_q, rows.bytes.data(), n_rows, d, 0.125f, scores.data(),
                          n_rows);
            const std::vector<float> p =
                RandomVector(n_q * n_rows, static_cast<uint32_t>(n_q * 3 + n_rows), 0.0f, 1.0f);
            std::vector<float> sums = RandomVector(n_q * d, static_cast<uint32_t>(n_q + d));
            const std::vector<float> start = sums;
            kv.weighted_sum_rows(p.data(), n_rows, n_q, rows.bytes.data(), n_rows, d, sums.data());
            for (int64_t h = 0; h < n_q; ++h) {
              kv.score_rows(&q[h * d], 1, rows.bytes.data(), n_rows, d, 0.125f, one.data(), n_rows);
              for (int64_t r = 0; r < n_rows; ++r) {
                ASSERT_EQ(scores[h * n_rows + r], one[r]) << Shape(*table, type, d, n_rows, n_q)
                                                          << " score of head " << h << " row " << r;
              }
              std::vector<float> sum(start.begin() + h * d, start.begin() + (h + 1) * d);
              kv.weighted_sum_rows(&p[h * n_rows], n_rows, 1, rows.bytes.data(), n_rows, d,
                                   sum.data());
              for (int64_t i = 0; i < d; ++i) {
                ASSERT_EQ(sums[h * d + i], sum[i]) << Shape(*table, type, d, n_rows, n_q)
                                                   << " sum of head " << h << " column " << i;
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
