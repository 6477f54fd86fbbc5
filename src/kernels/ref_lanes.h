// Internal to the reference kernels: the summation order of their dot
// products. kLanes independent float partial sums (lane k takes the
// elements i with i % kLanes == k), added pairwise at the end, shorten each
// rounding chain by kLanes; it is the order a SIMD backend naturally uses.
#pragma once

#include <cstdint>

namespace h2o::kernels::ref {

inline constexpr int kLanes = 8;

inline float SumLanes(const float (&acc)[kLanes]) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// sum_i load(i) * x[i] over kLanes partial sums.
template <typename Load>
float DotLanes(const Load& load, const float* x, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) acc[k] += load(i + k) * x[i + k];
  }
  for (int k = 0; i < n; ++i, ++k) acc[k] += load(i) * x[i];
  return SumLanes(acc);
}

}  // namespace h2o::kernels::ref
