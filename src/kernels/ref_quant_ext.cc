// Reference dequantize, dot and integer dot of q4_1, q5_0, q5_1 and the
// K-quants, each written once over the integer form of ref_formats.h.
#include <cstdint>

#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/ref_formats.h"
#include "kernels/ref_lanes.h"

namespace h2o::kernels::ref {
namespace {

// The float values of an unpacked block, in GGML's order of operations.
template <typename Ints>
void Values(const Ints& u, float* y) {
  for (int s = 0; s < Ints::kSubs; ++s) {
    const float step = u.d * static_cast<float>(u.scale[s]);
    const float offset = u.dmin * static_cast<float>(u.min[s]);
    for (int i = s * Ints::kSubSize; i < (s + 1) * Ints::kSubSize; ++i) {
      y[i] = step * static_cast<float>(u.code[i]) - offset;
    }
  }
}

template <typename F>
void Dequantize(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const typename F::Block*>(src);
  typename F::Ints u;
  for (int64_t b = 0; b < n / F::Ints::kSize; ++b) {
    F::Unpack(blocks[b], u);
    Values(u, dst + b * F::Ints::kSize);
  }
}

// Each block's values dotted in lanes, the block sums added in order.
template <typename F>
float Dot(const void* row, const float* x, int64_t n) {
  constexpr int kSize = F::Ints::kSize;
  const auto* blocks = static_cast<const typename F::Block*>(row);
  typename F::Ints u;
  float w[kSize];
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kSize; ++b) {
    F::Unpack(blocks[b], u);
    Values(u, w);
    const float* xb = x + b * kSize;
    float acc[kLanes] = {};
    for (int i = 0; i < kSize; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) acc[k] += w[i + k] * xb[i + k];
    }
    sum += SumLanes(acc);
  }
  return sum;
}

// Per block: isum = sum_s scale_s * sum_{i in s} code_i q_i and msum =
// sum_s min_s * sum_{i in s} q_i, both exact int32, then
// (d_w d_x) isum - (dmin_w d_x) msum.
template <typename F>
float DotInt(const void* row, const typename F::Act* x, int64_t n) {
  using Ints = typename F::Ints;
  static_assert(sizeof(x->qs) == Ints::kSize, "one activation block per weight block");
  const auto* blocks = static_cast<const typename F::Block*>(row);
  Ints u;
  float sum = 0.0f;
  for (int64_t b = 0; b < n / Ints::kSize; ++b) {
    F::Unpack(blocks[b], u);
    int32_t isum = 0;
    int32_t msum = 0;
    for (int s = 0; s < Ints::kSubs; ++s) {
      int32_t code_dot = 0;
      int32_t q_sum = 0;
      for (int i = s * Ints::kSubSize; i < (s + 1) * Ints::kSubSize; ++i) {
        code_dot += u.code[i] * x[b].qs[i];
        q_sum += x[b].qs[i];
      }
      isum += u.scale[s] * code_dot;
      msum += u.min[s] * q_sum;
    }
    sum += (u.d * x[b].d) * static_cast<float>(isum) - (u.dmin * x[b].d) * static_cast<float>(msum);
  }
  return sum;
}

}  // namespace

void DequantizeRowQ4_1(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ4_1>(src, dst, n);
}
void DequantizeRowQ5_0(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ5_0>(src, dst, n);
}
void DequantizeRowQ5_1(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ5_1>(src, dst, n);
}
void DequantizeRowQ2_K(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ2_K>(src, dst, n);
}
void DequantizeRowQ3_K(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ3_K>(src, dst, n);
}
void DequantizeRowQ4_K(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ4_K>(src, dst, n);
}
void DequantizeRowQ5_K(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ5_K>(src, dst, n);
}
void DequantizeRowQ6_K(const void* src, float* dst, int64_t n) {
  Dequantize<FormatQ6_K>(src, dst, n);
}

float DotRowQ4_1(const void* row, const float* x, int64_t n) { return Dot<FormatQ4_1>(row, x, n); }
float DotRowQ5_0(const void* row, const float* x, int64_t n) { return Dot<FormatQ5_0>(row, x, n); }
float DotRowQ5_1(const void* row, const float* x, int64_t n) { return Dot<FormatQ5_1>(row, x, n); }
float DotRowQ2_K(const void* row, const float* x, int64_t n) { return Dot<FormatQ2_K>(row, x, n); }
float DotRowQ3_K(const void* row, const float* x, int64_t n) { return Dot<FormatQ3_K>(row, x, n); }
float DotRowQ4_K(const void* row, const float* x, int64_t n) { return Dot<FormatQ4_K>(row, x, n); }
float DotRowQ5_K(const void* row, const float* x, int64_t n) { return Dot<FormatQ5_K>(row, x, n); }
float DotRowQ6_K(const void* row, const float* x, int64_t n) { return Dot<FormatQ6_K>(row, x, n); }

float DotRowQ8Q4_1(const void* row, const BlockQ8Act* x, int64_t n) {
  return DotInt<FormatQ4_1>(row, x, n);
}
float DotRowQ8Q5_0(const void* row, const BlockQ8Act* x, int64_t n) {
  return DotInt<FormatQ5_0>(row, x, n);
}
float DotRowQ8Q5_1(const void* row, const BlockQ8Act* x, int64_t n) {
  return DotInt<FormatQ5_1>(row, x, n);
}
float DotRowQ8KQ2_K(const void* row, const BlockQ8KAct* x, int64_t n) {
  return DotInt<FormatQ2_K>(row, x, n);
}
float DotRowQ8KQ3_K(const void* row, const BlockQ8KAct* x, int64_t n) {
  return DotInt<FormatQ3_K>(row, x, n);
}
float DotRowQ8KQ4_K(const void* row, const BlockQ8KAct* x, int64_t n) {
  return DotInt<FormatQ4_K>(row, x, n);
}
float DotRowQ8KQ5_K(const void* row, const BlockQ8KAct* x, int64_t n) {
  return DotInt<FormatQ5_K>(row, x, n);
}
float DotRowQ8KQ6_K(const void* row, const BlockQ8KAct* x, int64_t n) {
  return DotInt<FormatQ6_K>(row, x, n);
}

}  // namespace h2o::kernels::ref
