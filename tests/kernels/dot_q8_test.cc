// The integer dot paths of every backend (QuantizeActivation + dot_row_q8
// for the 32-element types, QuantizeActivationK + dot_row_q8k for the
// K-quants): activation blocks identical to the reference's, dots equal to
// the reference's bit for bit (exact block sums, its float expression), and
// within the derived quantization bound of the
// double-precision dot of the dequantized weights with the original float x.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
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

std::vector<BlockQ8KAct> QuantizeK(const KernelTable& table, const std::vector<float>& x) {
  std::vector<BlockQ8KAct> xq(x.size() / 256);
  table.quantize_act_k(x.data(), xq.data(), static_cast<int64_t>(x.size()));
  return xq;
}

// The activation of `type`'s integer dot and the dot itself, for one table.
float IntDot(const KernelTable& table, TensorType type, const std::vector<uint8_t>& row,
             const std::vector<BlockQ8Act>& xq, const std::vector<BlockQ8KAct>& xqk, int64_t n) {
  if (HasDotRowQ8(type)) return table.For(type).dot_row_q8(row.data(), xq.data(), n);
  return table.For(type).dot_row_q8k(row.data(), xqk.data(), n);
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

TEST(DotQ8Test, KActivationBlocksEqualTheReference) {
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t n : {256, 512, 256 * 9, 5632}) {
      for (float scale : {1.0f, 1e-3f, 300.0f}) {
        std::vector<float> x = RandomVector(n, static_cast<uint32_t>(n), -scale, scale);
        x[1] = x[0] / 127.0f * 2.5f;  // an exact tie
        if (n >= 512) std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
        const std::vector<BlockQ8KAct> want = QuantizeK(RefKernels(), x);
        const std::vector<BlockQ8KAct> got = QuantizeK(*table, x);
        for (size_t b = 0; b < want.size(); ++b) {
          const std::string where = std::string(table->name) + " n=" + std::to_string(n) +
                                    " scale=" + std::to_string(scale) + " block " +
                                    std::to_string(b);
          EXPECT_EQ(got[b].d, want[b].d) << where;
          EXPECT_EQ(std::memcmp(got[b].qs, want[b].qs, 256), 0) << where;
          for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int j = 16 * g; j < 16 * (g + 1); ++j) sum += want[b].qs[j];
            EXPECT_EQ(want[b].bsums[g], sum) << where << " group " << g;
            EXPECT_EQ(got[b].bsums[g], want[b].bsums[g]) << where << " group " << g;
          }
        }
      }
    }
  }
}

TEST(DotQ8Test, KQuantizationErrorIsAtMostHalfAStep) {
  const std::vector<float> x = RandomVector(256 * 5, 19, -3.0f, 3.0f);
  const std::vector<BlockQ8KAct> xq = QuantizeK(RefKernels(), x);
  for (size_t i = 0; i < x.size(); ++i) {
    const BlockQ8KAct& block = xq[i / 256];
    double amax = 0.0;
    for (size_t j = i / 256 * 256; j < i / 256 * 256 + 256; ++j)
      amax = std::max(amax, std::fabs(double{x[j]}));
    EXPECT_NEAR(block.d, amax / 127, 1e-7 * amax) << "i=" << i;
    EXPECT_LE(std::fabs(x[i] - static_cast<double>(block.d) * block.qs[i % 256]),
              block.d / 2 + FLT_EPSILON * std::fabs(x[i]))
        << "i=" << i;
  }
}

// The exact value the integer dot computes, sum_i w_i d_b q_i in double,
// against the dot: only the float additions of the per-block terms differ
// (each term rounded once or twice), bounded with the row's min terms as in
// IntDotTolerance.
template <typename Act>
void CheckIntDotOf(TensorType type, const std::vector<uint8_t>& row, const std::vector<float>& w,
                   const std::vector<float>& x, const std::vector<Act>& xq, float got,
                   const std::string& shape) {
  const int64_t n = static_cast<int64_t>(w.size());
  constexpr int64_t kElems = sizeof(Act::qs);
  const std::vector<double> min_term = testing::MinTermBound(type, row, n);
  double magnitude = 0.0, exact_q = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double xi = static_cast<double>(xq[i / kElems].d) * xq[i / kElems].qs[i % kElems];
    magnitude += (std::fabs(static_cast<double>(w[i])) + 2 * min_term[i]) * std::fabs(xi);
    exact_q += static_cast<double>(w[i]) * xi;
  }
  const double rounding = FLT_EPSILON * (static_cast<double>(n) / kElems + 16) * magnitude;
  EXPECT_NEAR(got, exact_q, rounding) << shape;
  // Against the original float x: the activation's quantization error too.
  double exact = 0.0;
  for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(w[i]) * x[i];
  EXPECT_NEAR(got, exact, testing::IntDotTolerance(w.data(), x.data(), xq.data(), n, min_term))
      << shape;
}

void CheckDotQ8(const KernelTable& table, TensorType type, int64_t n, uint32_t seed,
                float x_scale) {
  const std::vector<float> w_values = RandomVector(n, seed);
  const std::vector<float> x = RandomVector(n, seed + 1000, -x_scale, x_scale);
  const std::vector<uint8_t> row = StoreRow(type, w_values);
  const std::vector<float> w = LoadRow(type, row, n);
  const std::string shape = std::string("backend=") + table.name + " type=" + TypeName(type) +
                            " n=" + std::to_string(n) + " seed=" + std::to_string(seed) +
                            " x_scale=" + std::to_string(x_scale);
  std::vector<BlockQ8Act> xq;
  std::vector<BlockQ8KAct> xqk;
  if (HasDotRowQ8(type)) {
    xq = Quantize(RefKernels(), x);
  } else {
    xqk = QuantizeK(RefKernels(), x);
  }
  // Exact block sums and the reference's float expression per block: every
  // backend gives the reference's value bit for bit (which the tiles and
  // MatMul = MatVec rest on), and that is within the rounding bound of the
  // exact value.
  const float got = IntDot(table, type, row, xq, xqk, n);
  EXPECT_EQ(got, IntDot(RefKernels(), type, row, xq, xqk, n)) << shape;
  if (HasDotRowQ8(type)) {
    CheckIntDotOf(type, row, w, x, xq, got, shape);
  } else {
    CheckIntDotOf(type, row, w, x, xqk, got, shape);
  }
}

TEST(DotQ8Test, MatchesReferenceAndDoubleDotOnOddBlockCounts) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : testing::Q8Types()) {
      ASSERT_NE(table->For(type).dot_row_q8, nullptr) << table->name;
      EXPECT_EQ(table->For(type).dot_row_q8k, nullptr) << table->name;
      for (int64_t n : {32, 64, 96, 32 * 37, 4096 + 32, 11008}) {
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n), 1.0f);
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n) + 1, 1e-3f);
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n) + 2, 50.0f);
      }
    }
    for (TensorType type : testing::KTypes()) {
      ASSERT_NE(table->For(type).dot_row_q8k, nullptr) << table->name;
      EXPECT_EQ(table->For(type).dot_row_q8, nullptr) << table->name;
      for (int64_t n : {256, 512, 256 * 9, 2048, 5632, 11008}) {
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n), 1.0f);
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n) + 1, 1e-3f);
        CheckDotQ8(*table, type, n, static_cast<uint32_t>(n) + 2, 50.0f);
      }
    }
    for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kBF16}) {
      EXPECT_EQ(table->For(type).dot_row_q8, nullptr) << table->name << " " << TypeName(type);
      EXPECT_EQ(table->For(type).dot_row_q8k, nullptr) << table->name << " " << TypeName(type);
    }
  }
}

// Extreme codes: every weight at the end of its type's range (the largest
// magnitude code, the largest scale) against x = +-127 in every position,
// where the int16 pair sums of maddubs and the int32 block sums come
// closest to overflow. The integer result is exact, so every backend must
// give the reference's value within float rounding of a handful of
// per-block terms, and the exact value in double.
TEST(DotQ8Test, ExtremeCodesDoNotOverflow) {
  for (TensorType type : testing::AllTypes()) {
    if (TraitsOf(type).block_size == 1) continue;
    const int64_t n = 2 * TraitsOf(type).block_size;
    std::vector<float> x(n), w(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = (i % 3 == 0) ? -1.0f : 1.0f;
      w[i] = (i % 5 == 0) ? 1.0f : -1.0f;
    }
    const std::vector<uint8_t> row = StoreRow(type, w);
    const std::vector<float> wq = LoadRow(type, row, n);
    for (const KernelTable* table : AvailableKernels()) {
      std::vector<BlockQ8Act> xq;
      std::vector<BlockQ8KAct> xqk;
      if (HasDotRowQ8(type)) {
        xq = Quantize(*table, x);
      } else {
        xqk = QuantizeK(*table, x);
      }
      double exact = 0.0;
      for (int64_t i = 0; i < n; ++i) exact += static_cast<double>(wq[i]) * x[i];  // x_q = x here
      const float want = IntDot(RefKernels(), type, row, xq, xqk, n);
      const float got = IntDot(*table, type, row, xq, xqk, n);
      EXPECT_NEAR(got, want, 1e-5 * n) << table->name << " " << TypeName(type);
      EXPECT_NEAR(got, exact, 1e-5 * n) << table->name << " " << TypeName(type);
    }
  }
}

TEST(DotQ8Test, ZeroLengthIsZero) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : testing::Q8Types()) {
      EXPECT_EQ(table->For(type).dot_row_q8(nullptr, nullptr, 0), 0.0f) << table->name;
    }
    for (TensorType type : testing::KTypes()) {
      EXPECT_EQ(table->For(type).dot_row_q8k(nullptr, nullptr, 0), 0.0f) << table->name;
    }
  }
}

// Where a backend has a loop over many rows against one activation, it
// gives each row's dot_row_q8 bit for bit, at row counts around its blocking
// of 8 and with a row stride wider than the row.
TEST(DotQ8Test, ManyRowsEqualTheRowDot) {
  int covered = 0;
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : testing::Q8Types()) {
      const TypeKernels& tk = table->For(type);
      if (tk.dot_rows_q8 == nullptr) continue;
      ++covered;
      for (int64_t n : {32, 64, 128, 288}) {
        const size_t row_bytes = RowBytes(type, n);
        const size_t stride = row_bytes + 6;
        for (int64_t n_rows : {1, 7, 8, 9, 16, 23, 40}) {
          std::vector<uint8_t> rows(stride * n_rows);
          for (int64_t r = 0; r < n_rows; ++r) {
            const std::vector<uint8_t> row =
                StoreRow(type, RandomVector(n, static_cast<uint32_t>(n + 7 * r), -3.0f, 3.0f));
            std::memcpy(rows.data() + r * stride, row.data(), row_bytes);
          }
          const std::vector<BlockQ8Act> xq = Quantize(*table, RandomVector(n, 5, -2.0f, 2.0f));
          std::vector<float> got(n_rows + 1, 42.0f);
          tk.dot_rows_q8(rows.data(), stride, n_rows, xq.data(), n, got.data());
          for (int64_t r = 0; r < n_rows; ++r) {
            ASSERT_EQ(got[r], tk.dot_row_q8(rows.data() + r * stride, xq.data(), n))
                << table->name << " " << TypeName(type) << " n=" << n << " rows=" << n_rows
                << " row " << r;
          }
          EXPECT_EQ(got[n_rows], 42.0f) << "wrote past the rows";
        }
      }
    }
  }
  if (covered == 0) GTEST_SKIP() << "no backend here has a many-rows integer dot";
}

}  // namespace
}  // namespace h2o::kernels
