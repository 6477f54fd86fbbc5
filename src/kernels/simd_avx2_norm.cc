// AVX2 RmsNorm and LayerNorm: one normalization about a center (0 for
// RmsNorm, the mean for LayerNorm) with an optional bias, in the
// reference's order of roundings (ref_norm_act.cc): sums in double, the
// centered values, the scale and each product in float. Compiled with
// AVX2+FMA+F16C flags only (see simd_avx2.cc for the rules such files
// follow).
#include <immintrin.h>
#include <math.h>

#include <cstdint>

#include "kernels/avx2_common.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

constexpr int64_t kWidth = 8;

// sum_i f(x[i] - center) in double, f the identity or the square (of the
// widened float difference, so the square is exact). Four accumulators of
// four lanes each keep the additions independent.
template <bool kSquare>
double SumAbout(const float* x, __m256 center, int64_t n) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd()};
  auto add = [](__m256 v, __m256d& lo, __m256d& hi) {
    const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    const __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    if constexpr (kSquare) {
      lo = _mm256_fmadd_pd(a, a, lo);
      hi = _mm256_fmadd_pd(b, b, hi);
    } else {
      lo = _mm256_add_pd(lo, a);
      hi = _mm256_add_pd(hi, b);
    }
  };
  int64_t i = 0;
  for (; i + 2 * kWidth <= n; i += 2 * kWidth) {
    add(_mm256_sub_ps(_mm256_loadu_ps(x + i), center), acc[0], acc[1]);
    add(_mm256_sub_ps(_mm256_loadu_ps(x + i + kWidth), center), acc[2], acc[3]);
  }
  for (; i < n; i += kWidth) {
    // Lanes past the end load as 0, which the center would make nonzero.
    const __m256i mask = TailMask(n - i < kWidth ? n - i : kWidth);
    const __m256 d = _mm256_sub_ps(_mm256_maskload_ps(x + i, mask), center);
    add(_mm256_and_ps(d, _mm256_castsi256_ps(mask)), acc[0], acc[1]);
  }
  return HorizontalSum(_mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
}

// out = (x - center) * scale * weight (+ bias), with scale from the sum of
// the squared centered values. x is read again rather than the centered
// values kept, so out may alias x and nothing is written twice.
template <bool kBias>
void NormalizeAbout(const float* x, __m256 center, const float* weight, const float* bias,
                    float* out, int64_t n, float eps) {
  const double sum_sq = SumAbout<true>(x, center, n);
  const __m256 scale =
      _mm256_set1_ps(static_cast<float>(1.0 / sqrt(sum_sq / static_cast<double>(n) + eps)));
  auto y = [&](__m256 xv, __m256 w, __m256 b) {
    const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(xv, center), scale), w);
    return kBias ? _mm256_add_ps(v, b) : v;
  };
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const __m256 b = kBias ? _mm256_loadu_ps(bias + i) : _mm256_setzero_ps();
    _mm256_storeu_ps(out + i, y(_mm256_loadu_ps(x + i), _mm256_loadu_ps(weight + i), b));
  }
  if (i < n) {
    const int64_t m = n - i;
    const __m256 b = kBias ? LoadTail(bias + i, m) : _mm256_setzero_ps();
    StoreTail(out + i, y(LoadTail(x + i, m), LoadTail(weight + i, m), b), m);
  }
}

}  // namespace

void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps) {
  NormalizeAbout<false>(x, _mm256_setzero_ps(), weight, nullptr, out, n, eps);
}

// The mean rounds to float once, as in the reference.
void LayerNorm(const float* x, const float* weight, const float* bias, float* out, int64_t n,
               float eps) {
  const double sum = SumAbout<false>(x, _mm256_setzero_ps(), n);
  const __m256 mean = _mm256_set1_ps(static_cast<float>(sum / static_cast<double>(n)));
  if (bias != nullptr) {
    NormalizeAbout<true>(x, mean, weight, bias, out, n, eps);
  } else {
    NormalizeAbout<false>(x, mean, weight, nullptr, out, n, eps);
  }
}

}  // namespace h2o::kernels::avx2
