// Reference quantizers of q4_1, q5_0, q5_1 (GGML's quantize_row_*_ref,
// code for code) and of the K-quants (simpler than GGML's scale search; the
// guarantees are in quant.h). All build the integer form of ref_formats.h
// and pack it.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/fp16.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/ref_formats.h"

namespace h2o::kernels::ref {
namespace {

// q4_1 and q5_1: x = d q + m over the block's [min, max] in kMaxCode steps,
// codes rounded by truncating x + 0.5 (all terms are >= 0) as GGML does.
template <typename F, int kMaxCode>
void QuantizeMinMax(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<typename F::Block*>(dst);
  typename F::Ints u;
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* x = src + b * 32;
    float min = FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
      min = std::min(min, x[j]);
      max = std::max(max, x[j]);
    }
    const float d = (max - min) / kMaxCode;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    u.d = d;
    u.dmin = -min;
    u.scale[0] = 1;
    u.min[0] = 1;
    for (int j = 0; j < 32; ++j) {
      u.code[j] =
          static_cast<int8_t>(std::min(kMaxCode, static_cast<int>((x[j] - min) * id + 0.5f)));
    }
    F::Pack(u, blocks[b]);
  }
}

// Smallest half >= v, for v >= 0: a scale rounded up so that the grid it
// spans still covers the range it was computed for.
float RoundUpToHalf(float v) {
  uint16_t h = F32ToF16(v);
  if (F16ToF32(h) < v) ++h;
  return F16ToF32(h);
}

// ceil(need / unit) as a code in [0, max]; 0 when nothing is needed.
int16_t CeilCode(float need, float unit, int max) {
  if (need <= 0.0f || unit <= 0.0f) return 0;
  return static_cast<int16_t>(std::min(static_cast<float>(max), std::ceil(need / unit)));
}

// q2_K, q4_K, q5_K: x = (d sc_s) q - dmin m_s. Each sub-block needs its
// grid to start at or below min(0, min x) (the offset dmin m_s, rounded up)
// and reach max x in kMaxCode steps (the step d sc_s, rounded up); then
// every code is rounded to nearest.
template <typename F, int kMaxCode, int kMaxScale>
void QuantizeAffineK(const float* src, void* dst, int64_t n) {
  using Ints = typename F::Ints;
  auto* blocks = static_cast<typename F::Block*>(dst);
  Ints u;
  for (int64_t b = 0; b < n / Ints::kSize; ++b) {
    const float* x = src + b * Ints::kSize;
    float need_offset[Ints::kSubs], high[Ints::kSubs];
    float max_offset = 0.0f;
    for (int s = 0; s < Ints::kSubs; ++s) {
      float lo = 0.0f;
      float hi = x[s * Ints::kSubSize];
      for (int i = s * Ints::kSubSize; i < (s + 1) * Ints::kSubSize; ++i) {
        lo = std::min(lo, x[i]);
        hi = std::max(hi, x[i]);
      }
      need_offset[s] = -lo;
      high[s] = hi;
      max_offset = std::max(max_offset, -lo);
    }
    u.dmin = RoundUpToHalf(max_offset / kMaxScale);
    float offset[Ints::kSubs], need_step[Ints::kSubs];
    float max_step = 0.0f;
    for (int s = 0; s < Ints::kSubs; ++s) {
      u.min[s] = CeilCode(need_offset[s], u.dmin, kMaxScale);
      offset[s] = u.dmin * static_cast<float>(u.min[s]);
      need_step[s] = std::max(0.0f, (high[s] + offset[s]) / kMaxCode);
      max_step = std::max(max_step, need_step[s]);
    }
    u.d = RoundUpToHalf(max_step / kMaxScale);
    for (int s = 0; s < Ints::kSubs; ++s) {
      u.scale[s] = CeilCode(need_step[s], u.d, kMaxScale);
      const float step = u.d * static_cast<float>(u.scale[s]);
      for (int i = s * Ints::kSubSize; i < (s + 1) * Ints::kSubSize; ++i) {
        const float q = step > 0.0f ? std::nearbyint((x[i] + offset[s]) / step) : 0.0f;
        u.code[i] = static_cast<int8_t>(std::clamp(q, 0.0f, static_cast<float>(kMaxCode)));
      }
    }
    F::Pack(u, blocks[b]);
  }
}

// q3_K, q6_K: x = (d sc_s) c with c in [-kHalf, kHalf - 1]. The sub-block's
// value of largest magnitude v sets the step -v / kHalf (so v maps to
// -kHalf, the end of the grid with the extra code); the scale is rounded up
// in magnitude, the codes to nearest.
template <typename F, int kHalf, int kMaxScale>
void QuantizeSymmetricK(const float* src, void* dst, int64_t n) {
  using Ints = typename F::Ints;
  auto* blocks = static_cast<typename F::Block*>(dst);
  Ints u;
  for (int64_t b = 0; b < n / Ints::kSize; ++b) {
    const float* x = src + b * Ints::kSize;
    float want[Ints::kSubs];
    float max_abs = 0.0f;
    for (int s = 0; s < Ints::kSubs; ++s) {
      float extreme = 0.0f;
      for (int i = s * Ints::kSubSize; i < (s + 1) * Ints::kSubSize; ++i) {
        if (std::fabs(x[i]) > std::fabs(extreme)) extreme = x[i];
      }
      want[s] = -extreme / kHalf;
      max_abs = std::max(max_abs, std::fabs(want[s]));
    }
    u.d = RoundUpToHalf(max_abs / kMaxScale);
    u.dmin = 0.0f;
    for (int s = 0; s < Ints::kSubs; ++s) {
      const int16_t magnitude = CeilCode(std::fabs(want[s]), u.d, kMaxScale);
      u.scale[s] = static_cast<int16_t>(want[s] < 0.0f ? -magnitude : magnitude);
      u.min[s] = 0;
      const float step = u.d * static_cast<float>(u.scale[s]);
      for (int i = s * Ints::kSubSize; i < (s + 1) * Ints::kSubSize; ++i) {
        const float c = step != 0.0f ? std::nearbyint(x[i] / step) : 0.0f;
        u.code[i] = static_cast<int8_t>(
            std::clamp(c, static_cast<float>(-kHalf), static_cast<float>(kHalf - 1)));
      }
    }
    F::Pack(u, blocks[b]);
  }
}

}  // namespace

void QuantizeRowQ4_1(const float* src, void* dst, int64_t n) {
  QuantizeMinMax<FormatQ4_1, 15>(src, dst, n);
}

void QuantizeRowQ5_1(const float* src, void* dst, int64_t n) {
  QuantizeMinMax<FormatQ5_1, 31>(src, dst, n);
}

// As Q4_0 with 5 bits: the signed extreme maps to code 0 (-16 d).
void QuantizeRowQ5_0(const float* src, void* dst, int64_t n) {
  auto* blocks = static_cast<BlockQ5_0*>(dst);
  FormatQ5_0::Ints u;
  u.scale[0] = 1;
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* x = src + b * 32;
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < 32; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    u.d = max / -16.0f;
    const float id = u.d != 0.0f ? 1.0f / u.d : 0.0f;
    for (int j = 0; j < 32; ++j) {
      u.code[j] = static_cast<int8_t>(std::min(31, static_cast<int>(x[j] * id + 16.5f)) - 16);
    }
    FormatQ5_0::Pack(u, blocks[b]);
  }
}

void QuantizeRowQ2_K(const float* src, void* dst, int64_t n) {
  QuantizeAffineK<FormatQ2_K, 3, 15>(src, dst, n);
}
void QuantizeRowQ3_K(const float* src, void* dst, int64_t n) {
  QuantizeSymmetricK<FormatQ3_K, 4, 31>(src, dst, n);
}
void QuantizeRowQ4_K(const float* src, void* dst, int64_t n) {
  QuantizeAffineK<FormatQ4_K, 15, 63>(src, dst, n);
}
void QuantizeRowQ5_K(const float* src, void* dst, int64_t n) {
  QuantizeAffineK<FormatQ5_K, 31, 63>(src, dst, n);
}
void QuantizeRowQ6_K(const float* src, void* dst, int64_t n) {
  QuantizeSymmetricK<FormatQ6_K, 32, 127>(src, dst, n);
}

}  // namespace h2o::kernels::ref
