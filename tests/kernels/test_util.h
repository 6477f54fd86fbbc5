// Helpers shared by the kernel tests: seeded random data and the
// double-precision references the kernels are checked against.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/dispatch.h"
#include "kernels/quant.h"

namespace h2o::kernels::testing {

inline std::vector<float> RandomVector(int64_t n, uint32_t seed, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Row of n elements stored as `type`, quantized by the reference backend.
inline std::vector<uint8_t> StoreRow(TensorType type, const std::vector<float>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  std::vector<uint8_t> row(RowBytes(type, n));
  RefKernels().For(type).quantize_row(values.data(), row.data(), n);
  return row;
}

// The values a stored row represents, via the reference dequantizer.
inline std::vector<float> LoadRow(TensorType type, const std::vector<uint8_t>& row, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  RefKernels().For(type).dequantize_row(row.data(), out.data(), n);
  return out;
}

inline const char* TypeName(TensorType type) { return TraitsOf(type).name.data(); }

inline std::vector<TensorType> AllTypes() {
  return {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0,
          TensorType::kQ4_0};
}

// Bound on |DotRowQ8(row, xq) - sum_i w[i] x[i]| where w is the row
// dequantized, x the original floats and xq = QuantizeActivation(x):
//  - x's quantization: q = round(fl(x * fl(1/d))), so |d q - x| <= d/2 +
//    2u |x| (u = 2^-24 for the two roundings), giving sum_i |w_i| d_b/2 +
//    FLT_EPSILON sum_i |w_i x_i|;
//  - the float sum of the per-block terms (d_w d_x) * isum (int sums exact):
//    at most one rounding of the running magnitude per block and lane step,
//    (n/32 + 16) FLT_EPSILON sum_i |w_i d_b q_i|.
inline double Q8DotTolerance(const float* w, const float* x, const BlockQ8Act* xq, int64_t n) {
  double quant = 0.0, sum_wx = 0.0, sum_wq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const BlockQ8Act& block = xq[i / 32];
    quant += std::fabs(static_cast<double>(w[i])) * block.d / 2;
    sum_wx += std::fabs(static_cast<double>(w[i]) * x[i]);
    sum_wq += std::fabs(static_cast<double>(w[i]) * block.d * block.qs[i % 32]);
  }
  return quant + FLT_EPSILON * sum_wx + FLT_EPSILON * (static_cast<double>(n) / 32 + 16) * sum_wq;
}

}  // namespace h2o::kernels::testing
