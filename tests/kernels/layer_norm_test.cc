// LayerNorm of every backend against a double-precision formula written
// here (mean, population variance, then scale, weight and bias): hand-worked
// cases, every tail length at two alignments, inputs far from 0, no bias,
// and the result in place equal to the result out of place.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/ops.h"
#include "kernels/test_util.h"

namespace h2o::kernels {
namespace {

using testing::RandomVector;

TEST(LayerNormTest, HandWorkedCases) {
  // mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, 1/sqrt(1.25)
  // = 2/sqrt(5).
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const float w[4] = {1.0f, 1.0f, 2.0f, 2.0f};
  const float b[4] = {0.5f, 0.0f, 0.0f, -1.0f};
  const double s = 2.0 / std::sqrt(5.0);
  const double want[4] = {-1.5 * s + 0.5, -0.5 * s, 0.5 * s * 2, 1.5 * s * 2 - 1.0};
  for (const KernelTable* table : AvailableKernels()) {
    float out[4];
    table->layer_norm(x, w, b, out, 4, 0.0f);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], want[i], 4e-7) << table->name << " i=" << i;
    // No bias: the same without the added terms.
    table->layer_norm(x, w, nullptr, out, 4, 0.0f);
    EXPECT_NEAR(out[0], -1.5 * s, 4e-7) << table->name;
    EXPECT_NEAR(out[3], 3.0 * s, 4e-7) << table->name;
    // A constant vector (and a single element) centers to exactly 0: eps
    // keeps the scale finite and the output is the bias.
    const float flat[3] = {7.0f, 7.0f, 7.0f};
    table->layer_norm(flat, w, b, out, 3, 1e-5f);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], b[i]) << table->name << " i=" << i;
    table->layer_norm(flat, w, b + 3, out, 1, 1e-5f);
    EXPECT_EQ(out[0], -1.0f) << table->name;
    table->layer_norm(flat, w, nullptr, out, 3, 1e-5f);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], 0.0f) << table->name << " i=" << i;
  }
  float out[4];
  LayerNorm(x, w, b, out, 4, 0.0f);  // the public wrapper runs the active backend
  EXPECT_NEAR(out[0], want[0], 4e-7);
}

// 1..67 (every tail of every vector width up to 64) and a few lengths of
// real models' n_embd.
std::vector<int64_t> Sizes() {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 67; ++n) sizes.push_back(n);
  for (int64_t n : {768, 2048, 4099}) sizes.push_back(n);
  return sizes;
}

TEST(LayerNormTest, MatchesDoubleReferenceInAndOutOfPlace) {
  for (const KernelTable* table : AvailableKernels()) {
    for (int64_t n : Sizes()) {
      for (float center : {0.0f, 1000.0f}) {
        for (bool with_bias : {true, false}) {
          for (int offset : {0, 1}) {
            const auto seed = static_cast<uint32_t>(n);
            std::vector<float> xv = RandomVector(n, seed, -3.0f, 3.0f);
            for (float& v : xv) v += center;
            const std::vector<float> wv = RandomVector(n, seed + 1, -1.5f, 1.5f);
            const std::vector<float> bv = RandomVector(n, seed + 2, -1.0f, 1.0f);
            std::vector<float> x(n + 1), w(n + 1), b(n + 1), out(n + 2, -7.0f);
            std::copy(xv.begin(), xv.end(), x.begin() + offset);
            std::copy(wv.begin(), wv.end(), w.begin() + offset);
            std::copy(bv.begin(), bv.end(), b.begin() + offset);
            const float eps = 1e-5f;
            const float* bias = with_bias ? b.data() + offset : nullptr;
            table->layer_norm(x.data() + offset, w.data() + offset, bias, out.data() + offset, n,
                              eps);
            std::vector<float> in_place = x;
            table->layer_norm(in_place.data() + offset, w.data() + offset, bias,
                              in_place.data() + offset, n, eps);

            double mean = 0.0;
            for (float v : xv) mean += v;
            mean /= static_cast<double>(n);
            double var = 0.0;
            for (float v : xv) var += (v - mean) * (v - mean);
            var /= static_cast<double>(n);
            const double s = 1.0 / std::sqrt(var + eps);
            const std::string where =
                std::string("backend=") + table->name + " n=" + std::to_string(n) +
                " center=" + std::to_string(center) + " bias=" + std::to_string(with_bias) +
                " offset=" + std::to_string(offset);
            for (int64_t i = 0; i < n; ++i) {
              const double centered = xv[i] - mean;
              const double want = centered * s * wv[i] + (with_bias ? bv[i] : 0.0);
              // The mean rounds to float (an error of |mean| eps/2 in every
              // centered value); the centered value, the scale (from the
              // variance through a square root), two products and the bias
              // add each round once.
              const double scaled = std::fabs(wv[i]) * s;
              const double tol = FLT_EPSILON * (scaled * std::fabs(mean) +
                                                4 * scaled * std::fabs(centered) + std::fabs(want));
              ASSERT_NEAR(out[i + offset], want, tol) << where << " i=" << i;
              ASSERT_EQ(in_place[i + offset], out[i + offset]) << where << " i=" << i;
            }
            // Nothing written outside [offset, offset + n).
            for (int64_t i = 0; i < n + 2; ++i) {
              if (i < offset || i >= offset + n) {
                ASSERT_EQ(out[i], -7.0f) << where << " i=" << i;
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
