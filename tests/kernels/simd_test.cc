// Every SIMD backend against the scalar reference, entry by entry, over
// odd sizes (every n in 1..67, 4095, 4097 and seeded random ones for the
// float types; every whole number of blocks up to 4096 + one block for the
// quantized ones) and
// pointers one element off their allocation's alignment. Errors are
// normalized by magnitudes (sum |w x| for dots) with tolerances derived
// from FLT_EPSILON; conversions and RoPE must match bit for bit. Each
// failure prints the backend, type, size and offset. On a CPU without
// AVX2 the list of SIMD backends is empty and these tests pass trivially.
#include "kernels/simd.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::RandomVector;
using testing::TypeName;

std::vector<const KernelTable*> SimdTables() {
  std::vector<const KernelTable*> tables;
  for (const KernelTable* t : AvailableKernels()) {
    if (t != &RefKernels()) tables.push_back(t);
  }
  return tables;
}

// 1..67 (every remainder of every vector width up to 64, and more), the
// sizes around 4096, and a few seeded random ones.
std::vector<int64_t> FloatSizes() {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 67; ++n) sizes.push_back(n);
  sizes.push_back(4095);
  sizes.push_back(4097);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> dist(68, 5000);
  for (int k = 0; k < 8; ++k) sizes.push_back(dist(rng));
  return sizes;
}

std::vector<int64_t> SizesFor(TensorType type) {
  const int64_t block = TraitsOf(type).block_size;
  if (block == 1) return FloatSizes();
  std::vector<int64_t> sizes;
  for (int64_t n = block; n <= 4096 + block; n += block) sizes.push_back(n);
  return sizes;
}

// Byte offset that makes a row pointer "one element" off: one value for the
// float types, one fp16 scale (2 bytes) for the block types, whose blocks
// (18 to 292 bytes, most not a multiple of 4) already land at many
// alignments.
size_t ElementOffset(TensorType type) {
  return TraitsOf(type).block_size == 1 ? TraitsOf(type).block_bytes : sizeof(uint16_t);
}

void CopyInto(float* dst, const std::vector<float>& src) {
  std::memcpy(dst, src.data(), src.size() * sizeof(float));
}

std::string Shape(const KernelTable& t, TensorType type, int64_t n, int offset) {
  return std::string("backend=") + t.name + " type=" + TypeName(type) + " n=" + std::to_string(n) +
         " offset=" + std::to_string(offset);
}

TEST(SimdTest, DotRowMatchesReference) {
  for (const KernelTable* table : SimdTables()) {
    for (TensorType type : testing::AllTypes()) {
      for (int64_t n : SizesFor(type)) {
        for (int offset : {0, 1}) {
          const auto seed = static_cast<uint32_t>(n * 2 + offset);
          const std::vector<float> values = RandomVector(n, seed);
          const std::vector<float> x_values = RandomVector(n, seed + 7, -2.0f, 2.0f);
          // Copies at +offset elements inside larger buffers.
          const size_t row_bytes = RowBytes(type, n);
          std::vector<uint8_t> row_buf(row_bytes + 16);
          uint8_t* row = row_buf.data() + offset * ElementOffset(type);
          RefKernels().For(type).quantize_row(values.data(), row, n);
          std::vector<float> x_buf(static_cast<size_t>(n) + 1);
          float* x = x_buf.data() + offset;
          CopyInto(x, x_values);

          std::vector<float> w(static_cast<size_t>(n));
          RefKernels().For(type).dequantize_row(row, w.data(), n);
          double sum_abs = 0.0;
          for (int64_t i = 0; i < n; ++i) sum_abs += std::fabs(static_cast<double>(w[i]) * x[i]);
          // Each side is within FLT_EPSILON (n/8 + 16) sum|w x| of the exact
          // value (dot_test.cc), so they are within twice that of each other.
          const double tol = 2 * FLT_EPSILON * (static_cast<double>(n) / 8 + 16) * sum_abs;
          const float want = RefKernels().For(type).dot_row(row, x, n);
          const float got = table->For(type).dot_row(row, x, n);
          ASSERT_NEAR(got, want, tol) << Shape(*table, type, n, offset) << " sum|wx|=" << sum_abs;
        }
      }
    }
  }
}

// Widening a half/bfloat16 and d * q are exact or one rounding done the
// same way, so dequantized rows must be identical.
TEST(SimdTest, DequantizeRowIsBitIdenticalToReference) {
  for (const KernelTable* table : SimdTables()) {
    for (TensorType type : testing::AllTypes()) {
      for (int64_t n : SizesFor(type)) {
        for (int offset : {0, 1}) {
          const std::vector<float> values = RandomVector(n, static_cast<uint32_t>(n), -3.0f, 3.0f);
          std::vector<uint8_t> row_buf(RowBytes(type, n) + 16);
          uint8_t* row = row_buf.data() + offset * ElementOffset(type);
          RefKernels().For(type).quantize_row(values.data(), row, n);
          // Guard values after the end catch stores past n.
          std::vector<float> want(static_cast<size_t>(n) + 17, -7.0f);
          std::vector<float> got(static_cast<size_t>(n) + 17, -7.0f);
          RefKernels().For(type).dequantize_row(row, want.data() + offset, n);
          table->For(type).dequantize_row(row, got.data() + offset, n);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * sizeof(float)))
              << Shape(*table, type, n, offset);
        }
      }
    }
  }
}

TEST(SimdTest, RmsNormMatchesReference) {
  for (const KernelTable* table : SimdTables()) {
    for (int64_t n : FloatSizes()) {
      for (int offset : {0, 1}) {
        const std::vector<float> xv = RandomVector(n, static_cast<uint32_t>(n), -3.0f, 3.0f);
        const std::vector<float> wv = RandomVector(n, static_cast<uint32_t>(n) + 1, 0.5f, 1.5f);
        std::vector<float> x(n + 1), w(n + 1), want(n + 2, -7.0f), got(n + 2, -7.0f);
        CopyInto(x.data() + offset, xv);
        CopyInto(w.data() + offset, wv);
        ref::RmsNorm(x.data() + offset, w.data() + offset, want.data() + offset, n, 1e-5f);
        table->rms_norm(x.data() + offset, w.data() + offset, got.data() + offset, n, 1e-5f);
        // Both sum squares in double; only the order differs, so the scale
        // may differ in its last bit, plus two multiplies: 4 eps relative.
        for (int64_t i = 0; i < n + 2; ++i) {
          ASSERT_NEAR(got[i], want[i], 4 * FLT_EPSILON * std::fabs(want[i]))
              << "backend=" << table->name << " n=" << n << " offset=" << offset << " i=" << i;
        }
      }
    }
  }
}

void CheckSoftmax(const KernelTable& table, const std::vector<float>& input, int offset,
                  const char* what) {
  const int64_t n = static_cast<int64_t>(input.size());
  std::vector<float> want(n + 2, -7.0f), got(n + 2, -7.0f);
  CopyInto(want.data() + offset, input);
  CopyInto(got.data() + offset, input);
  ref::SoftmaxInPlace(want.data() + offset, n);
  table.softmax(got.data() + offset, n);
  float max = input[0];
  for (float v : input) max = std::max(max, v);
  for (int64_t i = 0; i < n + 2; ++i) {
    const int64_t k = i - offset;
    // exp's argument x - max is the same float on both sides; each exp is
    // within ~1 ulp, the double normalizers differ by rounding only, and
    // the scale multiplies round once: 8 eps relative.
    const bool inside = k >= 0 && k < n;
    const double tol = inside ? 8 * FLT_EPSILON * std::fabs(want[i]) : 0.0;
    ASSERT_NEAR(got[i], want[i], tol) << "backend=" << table.name << " " << what << " n=" << n
                                      << " offset=" << offset << " i=" << i << " max=" << max;
  }
}

TEST(SimdTest, SoftmaxMatchesReference) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const KernelTable* table : SimdTables()) {
    for (int64_t n : FloatSizes()) {
      for (int offset : {0, 1}) {
        std::vector<float> x = RandomVector(n, static_cast<uint32_t>(n), -10.0f, 10.0f);
        CheckSoftmax(*table, x, offset, "uniform[-10,10]");
        // Very negative inputs: exp(0 - max) of a padding lane would be inf.
        for (float& v : x) v -= 1000.0f;
        CheckSoftmax(*table, x, offset, "shifted-1000");
        // Masked entries (every third) become exactly 0.
        for (int64_t i = 1; i < n; i += 3) x[i] = -inf;
        CheckSoftmax(*table, x, offset, "masked");
      }
    }
  }
}

TEST(SimdTest, SwiGluMatchesReference) {
  for (const KernelTable* table : SimdTables()) {
    for (int64_t n : FloatSizes()) {
      for (int offset : {0, 1}) {
        const std::vector<float> gv = RandomVector(n, static_cast<uint32_t>(n), -20.0f, 20.0f);
        const std::vector<float> uv = RandomVector(n, static_cast<uint32_t>(n) + 3, -2.0f, 2.0f);
        std::vector<float> want(n + 2, -7.0f), got(n + 2, -7.0f), up(n + 1);
        CopyInto(want.data() + offset, gv);
        CopyInto(got.data() + offset, gv);
        CopyInto(up.data() + offset, uv);
        ref::SwiGluInPlace(want.data() + offset, up.data() + offset, n);
        table->swiglu(got.data() + offset, up.data() + offset, n);
        for (int64_t i = 0; i < n + 2; ++i) {
          // exp(-g) within ~1 ulp on both sides, damped by 1/(1 + e) (its
          // relative error passes through times e/(1+e) <= 1); a divide and a
          // multiply each: 6 eps relative.
          ASSERT_NEAR(got[i], want[i], 6 * FLT_EPSILON * std::fabs(want[i]))
              << "backend=" << table->name << " n=" << n << " offset=" << offset << " i=" << i;
        }
      }
    }
  }
}

TEST(SimdTest, RopeIsBitIdenticalToReference) {
  struct Case {
    int64_t n_heads, head_dim, n_rot, pos;
    float mscale;
  };
  // Pair counts 1, 3, 5, 32, 64, 65, 128: vector bodies, odd tails, and
  // more pairs than one angle chunk (64); partial rotary and a magnitude
  // factor.
  const Case cases[] = {{1, 2, 2, 5, 1.0f},        {3, 6, 6, 17, 1.0f},
                        {2, 10, 10, 3, 1.0f},      {4, 64, 64, 1000, 1.0f},
                        {8, 128, 128, 4095, 1.0f}, {2, 130, 130, 77, 1.0f},
                        {1, 256, 256, 9999, 1.0f}, {5, 6, 6, 0, 1.0f},
                        {3, 80, 20, 33, 1.0f},     {2, 96, 66, 500, 1.2f}};
  for (const KernelTable* table : SimdTables()) {
    for (const Case& c : cases) {
      // Uneven divisors, like Llama 3's rope_freqs.
      std::vector<double> inv_freq(static_cast<size_t>(c.n_rot / 2));
      for (size_t i = 0; i < inv_freq.size(); ++i) {
        inv_freq[i] =
            std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(c.n_rot)) /
            (1.0 + 0.37 * static_cast<double>(i % 5));
      }
      for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
        const RopeParams rope{inv_freq.data(), c.n_rot, c.mscale, mode};
        for (int offset : {0, 1}) {
          const int64_t n = c.n_heads * c.head_dim;
          const std::vector<float> xv = RandomVector(n, static_cast<uint32_t>(n), -2.0f, 2.0f);
          std::vector<float> want(n + 2, -7.0f), got(n + 2, -7.0f);
          CopyInto(want.data() + offset, xv);
          CopyInto(got.data() + offset, xv);
          ref::RopeInPlace(want.data() + offset, c.n_heads, c.head_dim, c.pos, rope);
          table->rope(got.data() + offset, c.n_heads, c.head_dim, c.pos, rope);
          ASSERT_EQ(want, got) << "backend=" << table->name << " heads=" << c.n_heads
                               << " head_dim=" << c.head_dim << " n_rot=" << c.n_rot
                               << " pos=" << c.pos << " mode=" << static_cast<int>(mode)
                               << " offset=" << offset;
        }
      }
    }
  }
}

#if defined(H2O_KERNELS_X86_SIMD)

using ExpRowFn = void (*)(const float*, float*, int64_t);

std::vector<std::pair<const char*, ExpRowFn>> ExpRows() {
  std::vector<std::pair<const char*, ExpRowFn>> rows;
  if (CpuHasAvx512()) rows.emplace_back("avx512", avx512::ExpRow);
  if (CpuHasAvx2()) rows.emplace_back("avx2", avx2::ExpRow);
  return rows;
}

// The vectorized exp over its whole domain: relative error < 2e-7 (about
// 1.7 ulp at worst; FLT_EPSILON is 1.19e-7) wherever the result is a
// normal float, within one subnormal step below that, and exact limits.
TEST(SimdExpTest, AccurateOverTheWholeRange) {
  const float lo = -103.5f, hi = 88.72f;
  const int64_t n = 1 << 20;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = lo + (hi - lo) * static_cast<float>(i) / (n - 1);
  // Plus every float in [-1, 1] near 0 and ln2/2 boundaries, densely.
  for (int64_t i = 0; i < 4096; ++i) x.push_back(static_cast<float>(i - 2048) * 1e-3f);
  for (int64_t i = 0; i < 4096; ++i) x.push_back(0.3465736f + static_cast<float>(i - 2048) * 1e-7f);
  for (const auto& [name, exp_row] : ExpRows()) {
    std::vector<float> y(x.size());
    exp_row(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0.0;
    float worst_x = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      if (want >= FLT_MIN) {
        const double rel = std::fabs(y[i] - want) / want;
        if (rel > worst) {
          worst = rel;
          worst_x = x[i];
        }
      } else {
        ASSERT_LE(std::fabs(y[i] - want), 0x1p-149) << name << " x=" << x[i];
      }
    }
    EXPECT_LT(worst, 2e-7) << name << " worst at x=" << worst_x;
    std::printf("[ %s ] exp: worst relative error %.3g (%.2f ulp of 1) at x=%.9g\n", name, worst,
                worst / FLT_EPSILON, worst_x);

    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float special[] = {0.0f, -0.0f, -inf, inf, nan, -1000.0f, 1000.0f, 88.7f, 89.0f, -104.0f};
    float out[10];
    exp_row(special, out, 10);
    EXPECT_EQ(out[0], 1.0f) << name;
    EXPECT_EQ(out[1], 1.0f) << name;
    EXPECT_EQ(out[2], 0.0f) << name;
    EXPECT_EQ(out[3], inf) << name;
    EXPECT_TRUE(std::isnan(out[4])) << name;
    EXPECT_EQ(out[5], 0.0f) << name;
    EXPECT_EQ(out[6], inf) << name;
    const double e887 = std::exp(double{88.7f});  // 3.3e38: n = 128, must not overflow
    EXPECT_NEAR(out[7], e887, 2e-7 * e887) << name;
    EXPECT_EQ(out[8], inf) << name;
    EXPECT_EQ(out[9], 0.0f) << name;
  }
}

#endif  // H2O_KERNELS_X86_SIMD

}  // namespace
}  // namespace h2o::kernels
