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
#include "kernels/fp16.h"
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

// Every type h2o runs: the floats, the 32-element quantized types and the
// K-quants (256-element super-blocks).
inline std::vector<TensorType> AllTypes() {
  return {TensorType::kF32,  TensorType::kF16,  TensorType::kBF16, TensorType::kQ8_0,
          TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0, TensorType::kQ5_1,
          TensorType::kQ2_K, TensorType::kQ3_K, TensorType::kQ4_K, TensorType::kQ5_K,
          TensorType::kQ6_K};
}

inline std::vector<TensorType> Q8Types() {
  return {TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0,
          TensorType::kQ5_1};
}

inline std::vector<TensorType> KTypes() {
  return {TensorType::kQ2_K, TensorType::kQ3_K, TensorType::kQ4_K, TensorType::kQ5_K,
          TensorType::kQ6_K};
}

// n rounded up to a whole number of the type's blocks.
inline int64_t WholeBlocks(TensorType type, int64_t n) {
  const int64_t block = TraitsOf(type).block_size;
  return (n + block - 1) / block * block;
}

// Per element, the largest magnitude the min term of its block can have:
// |m| for q4_1/q5_1 (x = d q + m), dmin * (largest min code) for q2_K, q4_K
// and q5_K (x = d sc q - dmin m), 0 for the others. A value w then splits
// into a scaled code and a min term of at most |w| + 2 * that together,
// which is what the integer dots round.
inline std::vector<double> MinTermBound(TensorType type, const std::vector<uint8_t>& row,
                                        int64_t n) {
  std::vector<double> bound(static_cast<size_t>(n), 0.0);
  auto fill = [&](int64_t block_size, auto per_block) {
    for (int64_t i = 0; i < n; ++i) bound[i] = per_block(i / block_size);
  };
  switch (type) {
    case TensorType::kQ4_1:
      fill(32, [&](int64_t b) {
        return std::fabs(F16ToF32(reinterpret_cast<const BlockQ4_1*>(row.data())[b].m));
      });
      break;
    case TensorType::kQ5_1:
      fill(32, [&](int64_t b) {
        return std::fabs(F16ToF32(reinterpret_cast<const BlockQ5_1*>(row.data())[b].m));
      });
      break;
    case TensorType::kQ2_K:
      fill(256, [&](int64_t b) {
        return 15.0 * F16ToF32(reinterpret_cast<const BlockQ2_K*>(row.data())[b].dmin);
      });
      break;
    case TensorType::kQ4_K:
      fill(256, [&](int64_t b) {
        return 63.0 * F16ToF32(reinterpret_cast<const BlockQ4_K*>(row.data())[b].dmin);
      });
      break;
    case TensorType::kQ5_K:
      fill(256, [&](int64_t b) {
        return 63.0 * F16ToF32(reinterpret_cast<const BlockQ5_K*>(row.data())[b].dmin);
      });
      break;
    default:
      break;
  }
  return bound;
}

// Bound on |DotRowQ8(row, xq) - sum_i w[i] x[i]| (and the same for
// DotRowQ8K with its 256-element blocks) where w is the row dequantized, x
// the original floats and xq = QuantizeActivation(K)(x); min_term is
// MinTermBound of the row:
//  - x's quantization: q = round(fl(x * fl(1/d))), so |d q - x| <= d/2 +
//    2u |x| (u = 2^-24 for the two roundings), giving sum_i |w_i| d_b/2 +
//    FLT_EPSILON sum_i |w_i x_i|;
//  - the float sum of the per-block terms (d_w d_x) * isum (and the min
//    terms; int sums exact): at most one rounding of the running magnitude
//    per block and lane step, and w itself rounded from its exact scaled
//    code and min term, (n/block + 16) FLT_EPSILON sum_i (|w_i| + 2
//    min_term_i) |d_b q_i|.
template <typename Act>
double IntDotTolerance(const float* w, const float* x, const Act* xq, int64_t n,
                       const std::vector<double>& min_term) {
  constexpr int64_t kElems = sizeof(Act::qs);
  double quant = 0.0, sum_wx = 0.0, sum_wq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const Act& block = xq[i / kElems];
    quant += std::fabs(static_cast<double>(w[i])) * block.d / 2;
    sum_wx += std::fabs(static_cast<double>(w[i]) * x[i]);
    sum_wq += (std::fabs(static_cast<double>(w[i])) + 2 * min_term[i]) *
              std::fabs(block.d * static_cast<double>(block.qs[i % kElems]));
  }
  return quant + FLT_EPSILON * sum_wx +
         FLT_EPSILON * (static_cast<double>(n) / kElems + 16) * sum_wq;
}

inline double Q8DotTolerance(const float* w, const float* x, const BlockQ8Act* xq, int64_t n) {
  return IntDotTolerance(w, x, xq, n, std::vector<double>(static_cast<size_t>(n), 0.0));
}

}  // namespace h2o::kernels::testing
