// Scalar reference row kernels: quantize, dequantize, dot.
//
// Dot products sum in lanes (ref_lanes.h); the quantized types sum a block
// in lanes, scale the block sum by d once, and add the scaled sums in a
// float accumulator.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/ref_lanes.h"

namespace h2o::kernels::ref {

void QuantizeRowF32(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void QuantizeRowF16(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = F32ToF16(src[i]);
}

void QuantizeRowBF16(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = F32ToBF16(src[i]);
}

void QuantizeRowQ8_0(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ8_0*>(dst);
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
    const float* x = src + b * kQ8_0BlockSize;
    float amax = 0.0f;
    for (int j = 0; j < kQ8_0BlockSize; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = F32ToF16(d);
    for (int j = 0; j < kQ8_0BlockSize; ++j) {
      blocks[b].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    }
  }
}

void QuantizeRowQ4_0(const float* src, void* dst, int64_t n) {
  constexpr int kHalf = kQ4_0BlockSize / 2;
  auto* blocks = static_cast<BlockQ4_0*>(dst);
  for (int64_t b = 0; b < n / kQ4_0BlockSize; ++b) {
    const float* x = src + b * kQ4_0BlockSize;
    // The signed value of largest magnitude (first one on ties) maps to
    // code 0, i.e. exactly -8 * d, so the extreme is reproduced exactly.
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kQ4_0BlockSize; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = F32ToF16(d);
    for (int j = 0; j < kHalf; ++j) {
      // Truncation of a value >= 0.5 after adding 8.5 rounds to nearest.
      const int lo = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int hi = std::min(15, static_cast<int>(x[j + kHalf] * id + 8.5f));
      blocks[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void DequantizeRowF32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void DequantizeRowF16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(in[i]);
}

void DequantizeRowBF16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToF32(in[i]);
}

void DequantizeRowQ8_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
    const float d = F16ToF32(blocks[b].d);
    float* y = dst + b * kQ8_0BlockSize;
    for (int j = 0; j < kQ8_0BlockSize; ++j) y[j] = d * static_cast<float>(blocks[b].qs[j]);
  }
}

void DequantizeRowQ4_0(const void* src, float* dst, int64_t n) {
  constexpr int kHalf = kQ4_0BlockSize / 2;
  const auto* blocks = static_cast<const BlockQ4_0*>(src);
  for (int64_t b = 0; b < n / kQ4_0BlockSize; ++b) {
    const float d = F16ToF32(blocks[b].d);
    float* y = dst + b * kQ4_0BlockSize;
    for (int j = 0; j < kHalf; ++j) {
      y[j] = d * static_cast<float>((blocks[b].qs[j] & 0x0F) - 8);
      y[j + kHalf] = d * static_cast<float>((blocks[b].qs[j] >> 4) - 8);
    }
  }
}

float DotRowF32(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const float*>(row);
  return DotLanes([w](int64_t i) { return w[i]; }, x, n);
}

float DotRowF16(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const uint16_t*>(row);
  return DotLanes([w](int64_t i) { return F16ToF32(w[i]); }, x, n);
}

float DotRowBF16(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const uint16_t*>(row);
  return DotLanes([w](int64_t i) { return BF16ToF32(w[i]); }, x, n);
}

float DotRowQ8_0(const void* row, const float* x, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b, x += kQ8_0BlockSize) {
    const int8_t* q = blocks[b].qs;
    float acc[kLanes] = {};
    for (int j = 0; j < kQ8_0BlockSize; j += kLanes) {
      for (int k = 0; k < kLanes; ++k) acc[k] += static_cast<float>(q[j + k]) * x[j + k];
    }
    sum += F16ToF32(blocks[b].d) * SumLanes(acc);
  }
  return sum;
}

float DotRowQ4_0(const void* row, const float* x, int64_t n) {
  constexpr int kHalf = kQ4_0BlockSize / 2;
  const auto* blocks = static_cast<const BlockQ4_0*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQ4_0BlockSize; ++b, x += kQ4_0BlockSize) {
    const uint8_t* q = blocks[b].qs;
    float acc[kLanes] = {};
    for (int j = 0; j < kHalf; j += kLanes) {
      for (int k = 0; k < kLanes; ++k) {
        acc[k] += static_cast<float>((q[j + k] & 0x0F) - 8) * x[j + k];
        acc[k] += static_cast<float>((q[j + k] >> 4) - 8) * x[j + k + kHalf];
      }
    }
    sum += F16ToF32(blocks[b].d) * SumLanes(acc);
  }
  return sum;
}

namespace {

// The activation codes of x[0, kSize): d = max |x| / 127, then
// round-to-nearest-even(x * (1 / d)) (0 when d is 0). Returns d.
template <int kSize>
float RoundToCodes(const float* x, int8_t (&qs)[kSize]) {
  float amax = 0.0f;
  for (int j = 0; j < kSize; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  // nearbyint: ties to even in the default rounding mode, as the SIMD
  // backends' round instruction.
  for (int j = 0; j < kSize; ++j) qs[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
  return d;
}

int32_t SumCodes(const int8_t* qs, int n) {
  int32_t sum = 0;
  for (int j = 0; j < n; ++j) sum += qs[j];
  return sum;
}

}  // namespace

void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    dst[b].d = RoundToCodes(x, dst[b].qs);
    dst[b].sum = SumCodes(dst[b].qs, 32);
  }
}

void QuantizeActivationK(const float* x, BlockQ8KAct* dst, int64_t n) {
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    dst[b].d = RoundToCodes(x, dst[b].qs);
    for (int g = 0; g < 16; ++g) {
      dst[b].bsums[g] = static_cast<int16_t>(SumCodes(dst[b].qs + 16 * g, 16));
    }
  }
}

float DotRowQ8Q8_0(const void* row, const BlockQ8Act* x, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < kQ8_0BlockSize; ++j) isum += blocks[b].qs[j] * x[b].qs[j];
    sum += (F16ToF32(blocks[b].d) * x[b].d) * static_cast<float>(isum);
  }
  return sum;
}

float DotRowQ8Q4_0(const void* row, const BlockQ8Act* x, int64_t n) {
  constexpr int kHalf = kQ4_0BlockSize / 2;
  const auto* blocks = static_cast<const BlockQ4_0*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / kQ4_0BlockSize; ++b) {
    const uint8_t* q = blocks[b].qs;
    int32_t isum = 0;
    for (int j = 0; j < kHalf; ++j) {
      isum += ((q[j] & 0x0F) - 8) * x[b].qs[j] + ((q[j] >> 4) - 8) * x[b].qs[j + kHalf];
    }
    sum += (F16ToF32(blocks[b].d) * x[b].d) * static_cast<float>(isum);
  }
  return sum;
}

}  // namespace h2o::kernels::ref
