// The GEMM tiles (KernelTable gemm entries) of every backend against the
// reference's scalar twin (its row dot per (row, token) pair), at every
// token count from 1 to 64 and a few larger, odd row counts, column counts
// that leave every kind of remainder; and the property MatMul rests on: a
// pair's value does not depend on the tile it is computed in.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::AllTypes;
using testing::RandomVector;
using testing::TypeName;

// A weight matrix stored as `type` (quantized by the reference), its
// dequantized values, and activations in the type's format.
struct Problem {
  TensorType type;
  int64_t rows, cols, n_tokens;
  std::vector<uint8_t> w;
  std::vector<float> w_values;  // dequantized
  std::vector<float> x;
  std::vector<uint8_t> acts;  // x as the tile takes it (quantized for the integer types)

  size_t row_bytes() const { return RowBytes(type, cols); }
};

// The weights `values` (rows x cols) and activations x (n_tokens x cols)
// as the tile takes them.
Problem MakeProblemOf(TensorType type, int64_t rows, int64_t cols, int64_t n_tokens,
                      const std::vector<float>& values, std::vector<float> x) {
  Problem p{type, rows, cols, n_tokens, {}, {}, std::move(x), {}};
  p.w = testing::StoreRow(type, values);  // rows are contiguous
  p.w_values = testing::LoadRow(type, p.w, rows * cols);
  switch (ActivationFormat(type)) {
    case ActFormat::kQ8:
      p.acts.resize(n_tokens * (cols / 32) * sizeof(BlockQ8Act));
      RefKernels().quantize_act(p.x.data(), reinterpret_cast<BlockQ8Act*>(p.acts.data()),
                                n_tokens * cols);
      break;
    case ActFormat::kQ8K:
      p.acts.resize(n_tokens * (cols / 256) * sizeof(BlockQ8KAct));
      RefKernels().quantize_act_k(p.x.data(), reinterpret_cast<BlockQ8KAct*>(p.acts.data()),
                                  n_tokens * cols);
      break;
    case ActFormat::kNone:
      p.acts.resize(p.x.size() * sizeof(float));
      std::memcpy(p.acts.data(), p.x.data(), p.acts.size());
      break;
  }
  return p;
}

Problem MakeProblem(TensorType type, int64_t rows, int64_t cols, int64_t n_tokens, uint32_t seed) {
  return MakeProblemOf(type, rows, cols, n_tokens, RandomVector(rows * cols, seed),
                       RandomVector(n_tokens * cols, seed + 1));
}

std::vector<float> RunTile(const KernelTable& table, const Problem& p) {
  std::vector<float> y(p.n_tokens * p.rows, -7.0f);
  std::vector<uint8_t> scratch(GemmScratchBytes(p.cols, p.n_tokens));
  table.For(p.type).gemm(p.w.data(), p.row_bytes(), p.rows, p.acts.data(), p.n_tokens, p.cols,
                         y.data(), p.rows, scratch.data());
  return y;
}

// The magnitude the float rounding of a pair scales with: sum_i |w_i x_i|
// over the values the dot multiplies (x as quantized for the integer types).
double Magnitude(const Problem& p, int64_t r, int64_t t) {
  double sum = 0.0;
  const float* w = &p.w_values[r * p.cols];
  for (int64_t i = 0; i < p.cols; ++i) {
    double x = p.x[t * p.cols + i];
    if (HasDotRowQ8(p.type)) {
      const auto* b = reinterpret_cast<const BlockQ8Act*>(p.acts.data()) + t * (p.cols / 32);
      x = static_cast<double>(b[i / 32].d) * b[i / 32].qs[i % 32];
    } else if (HasDotRowQ8K(p.type)) {
      const auto* b = reinterpret_cast<const BlockQ8KAct*>(p.acts.data()) + t * (p.cols / 256);
      x = static_cast<double>(b[i / 256].d) * b[i / 256].qs[i % 256];
    }
    // A min term (q4_1, q5_1, q2_K, q4_K, q5_K) can be as large as the
    // value it offsets twice over; 3 |w| covers the partial sums' size.
    sum += 3 * std::fabs(w[i] * x);
  }
  return sum;
}

// The quantized types' tiles follow the reference's order exactly (exact
// integer sums, then its float expression per block); the float tiles
// their own lane order, within float rounding of the reference.
void ExpectMatchesTwin(const KernelTable& table, const Problem& p) {
  const std::vector<float> got = RunTile(table, p);
  const std::vector<float> want = RunTile(RefKernels(), p);
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    for (int64_t r = 0; r < p.rows; ++r) {
      const std::string where =
          std::string(table.name) + " " + TypeName(p.type) + " rows=" + std::to_string(p.rows) +
          " cols=" + std::to_string(p.cols) + " n=" + std::to_string(p.n_tokens) +
          " r=" + std::to_string(r) + " t=" + std::to_string(t);
      const float g = got[t * p.rows + r];
      const float v = want[t * p.rows + r];
      if (HasDotRowQ8(p.type) || HasDotRowQ8K(p.type)) {
        ASSERT_EQ(g, v) << where;
      } else {
        const double steps = static_cast<double>(p.cols) / 8 + 16;
        ASSERT_NEAR(g, v, 2 * FLT_EPSILON * steps * Magnitude(p, r, t)) << where;
      }
    }
  }
}

// Columns per type: several blocks with a remainder past the AVX2 dots'
// four-block steps (5 blocks of 32, 2 super-blocks), and for the floats a
// count that is not a multiple of any vector width.
int64_t Cols(TensorType type) {
  if (TraitsOf(type).block_size == 256) return 512;
  if (TraitsOf(type).block_size == 32) return 160;
  return 77;
}

TEST(GemmTest, EveryBackendMatchesItsTwinAtEveryTokenCount) {
  for (const KernelTable* table : AvailableKernels()) {
    if (table == &RefKernels()) continue;
    for (TensorType type : AllTypes()) {
      for (int64_t n = 1; n <= 64; ++n) {
        ExpectMatchesTwin(*table, MakeProblem(type, 37, Cols(type), n, static_cast<uint32_t>(n)));
      }
      for (int64_t n : {100, 512})
        ExpectMatchesTwin(*table, MakeProblem(type, 9, Cols(type), n, 3));
    }
  }
}

TEST(GemmTest, OddShapes) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      const int64_t block = TraitsOf(type).block_size;
      for (int64_t rows : {1, 2, 3, 5, 8, 15, 16, 17, 31, 32, 33, 65}) {
        for (int64_t cols : {block, 4 * block, 7 * block, block == 1 ? 1 : 9 * block}) {
          ExpectMatchesTwin(*table, MakeProblem(type, rows, cols, 7, static_cast<uint32_t>(rows)));
        }
      }
      if (block == 1) {
        for (int64_t cols : {1, 7, 8, 9, 15, 16, 17, 31, 33, 129}) {
          ExpectMatchesTwin(*table, MakeProblem(type, 5, cols, 13, static_cast<uint32_t>(cols)));
        }
      }
    }
  }
}

// Extreme codes: weights at the ends of their type's range (the largest
// codes and scales) against activation codes of +-127 of one sign per
// token, where the int16 pair sums of the maddubs tiles come closest to
// overflow; token counts past the tiles' lower bound, so the tiles (not
// the row dots) run. A block's largest magnitude sets its scale, and the
// symmetric types map it to the lowest code, so the patterns put one value
// of each sign at the end and the rest at the other.
TEST(GemmTest, ExtremeCodesMatchTheTwin) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      const int64_t rows = 11, cols = Cols(type), n = 20;
      for (float sign : {1.0f, -1.0f}) {
        std::vector<float> w(rows * cols), x(n * cols);
        for (int64_t i = 0; i < rows * cols; ++i) {
          w[i] = sign * (i % 16 == 0 ? 1.0f : -0.97f) * (i / cols % 2 == 0 ? 1.0f : -1.0f);
        }
        for (int64_t i = 0; i < n * cols; ++i) x[i] = i / cols % 2 == 0 ? 1.0f : -1.0f;
        ExpectMatchesTwin(*table, MakeProblemOf(type, rows, cols, n, w, x));
      }
    }
  }
}

// A pair's value is the same whichever sub-tile it is computed in: rows and
// tokens split at odd places, and one token at a time (what MatVec does).
TEST(GemmTest, ValueDoesNotDependOnTheTile) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      const Problem p = MakeProblem(type, 41, Cols(type), 23, 17);
      const std::vector<float> full = RunTile(*table, p);
      const GemmFn gemm = table->For(type).gemm;
      const size_t act_bytes = p.acts.size() / p.n_tokens;
      std::vector<uint8_t> scratch(GemmScratchBytes(p.cols, p.n_tokens));
      for (int64_t r0 : {0, 3, 19}) {
        for (int64_t t0 : {0, 1, 6}) {
          for (int64_t nt : {1, 2, 5, 17}) {
            if (t0 + nt > p.n_tokens) continue;
            const int64_t nr = p.rows - r0;
            std::vector<float> part(nt * nr);
            gemm(p.w.data() + r0 * p.row_bytes(), p.row_bytes(), nr, p.acts.data() + t0 * act_bytes,
                 nt, p.cols, part.data(), nr, scratch.data());
            for (int64_t t = 0; t < nt; ++t) {
              for (int64_t r = 0; r < nr; ++r) {
                ASSERT_EQ(part[t * nr + r], full[(t0 + t) * p.rows + r0 + r])
                    << table->name << " " << TypeName(type) << " r0=" << r0 << " t0=" << t0
                    << " nt=" << nt << " r=" << r << " t=" << t;
              }
            }
          }
        }
      }
    }
  }
}

// Panels packed once (pack_panels) give what the reference's twin gives
// over the rows, bit for bit: every row count around the panel sizes (8,
// 16, 32), so the last panel is partly past the matrix; every token count
// from 1 (decode) to 64 on the larger matrices; and a product that starts
// at a later kPanelAlignRows boundary, as MatMul's threads do. The panels
// fit in PanelsBytes (the sanitizer build checks the packer writes no
// further).
TEST(GemmTest, PanelsPackedOnceMatchTheTwin) {
  int offered = 0;
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      const TypeKernels& tk = table->For(type);
      ASSERT_EQ(tk.pack_panels == nullptr, tk.gemm_panels == nullptr) << table->name;
      if (tk.pack_panels == nullptr) continue;
      ++offered;
      for (int64_t rows : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 70, 97}) {
        for (int64_t n = 1; n <= 64; n += rows < 32 ? 7 : 1) {
          const Problem p = MakeProblem(type, rows, Cols(type), n, static_cast<uint32_t>(rows * n));
          std::vector<uint8_t> panels(PanelsBytes(type, rows, p.cols));
          tk.pack_panels(p.w.data(), p.row_bytes(), rows, p.cols, panels.data());
          const std::vector<float> want = RunTile(RefKernels(), p);
          std::vector<uint8_t> scratch(GemmScratchBytes(p.cols, n));
          for (int64_t first = 0; first < rows; first += kPanelAlignRows) {
            const int64_t nr = rows - first;
            std::vector<float> y(n * nr, -7.0f);
            tk.gemm_panels(panels.data() + first * p.row_bytes(), p.row_bytes(), nr, p.acts.data(),
                           n, p.cols, y.data(), nr, scratch.data());
            for (int64_t t = 0; t < n; ++t) {
              for (int64_t r = 0; r < nr; ++r) {
                ASSERT_EQ(y[t * nr + r], want[t * rows + first + r])
                    << table->name << " " << TypeName(type) << " rows=" << rows << " n=" << n
                    << " first=" << first << " r=" << r << " t=" << t;
              }
            }
          }
        }
      }
    }
  }
  if (offered == 0) GTEST_SKIP() << "no backend on this CPU packs panels";
}

// The tile writes exactly its rows and tokens of y.
TEST(GemmTest, WritesOnlyItsOwnPartOfY) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : AllTypes()) {
      for (int64_t n : {6, 21}) {  // below and above the maddubs tiles' lower bound
        const Problem p = MakeProblem(type, 19, Cols(type), n, 5);
        const int64_t ldy = p.rows + 5;
        std::vector<float> y(p.n_tokens * ldy, -7.0f);
        std::vector<uint8_t> scratch(GemmScratchBytes(p.cols, p.n_tokens));
        table->For(type).gemm(p.w.data(), p.row_bytes(), p.rows, p.acts.data(), p.n_tokens, p.cols,
                              y.data(), ldy, scratch.data());
        for (int64_t t = 0; t < p.n_tokens; ++t) {
          for (int64_t r = p.rows; r < ldy; ++r) {
            EXPECT_EQ(y[t * ldy + r], -7.0f) << table->name << " " << TypeName(type);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
