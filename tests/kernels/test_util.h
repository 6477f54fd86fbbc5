// Helpers shared by the kernel tests: seeded random data and the
// double-precision references the kernels are checked against.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/dispatch.h"

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

}  // namespace h2o::kernels::testing
