// Register-blocked f32 products for prefill: 2 weight rows x 4 tokens per
// step, so each loaded vector feeds several FMAs (a plain dot loads two
// vectors per FMA and is load-bound). Compiled with AVX2+FMA flags only;
// dispatch.cc installs it after a CPUID check.
#include <immintrin.h>

#include <cstdint>

#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

constexpr int64_t kWidth = 8;

float Sum(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v);
  const __m128 hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Remainder of a dot product past the last full vector.
float TailDot(const float* a, const float* b, int64_t begin, int64_t n) {
  float s = 0.0f;
  for (int64_t i = begin; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y[t * ldy + r] for rows r0, r0+1 and tokens t0..t0+3.
void Block2x4(const float* w0, const float* w1, const float* x, int64_t cols, int64_t t0,
              int64_t r0, float* y, int64_t ldy) {
  const float* x0 = x + (t0 + 0) * cols;
  const float* x1 = x + (t0 + 1) * cols;
  const float* x2 = x + (t0 + 2) * cols;
  const float* x3 = x + (t0 + 3) * cols;
  __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
  __m256 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
  int64_t i = 0;
  for (; i + kWidth <= cols; i += kWidth) {
    const __m256 v0 = _mm256_loadu_ps(w0 + i);
    const __m256 v1 = _mm256_loadu_ps(w1 + i);
    __m256 xv = _mm256_loadu_ps(x0 + i);
    a00 = _mm256_fmadd_ps(v0, xv, a00);
    a10 = _mm256_fmadd_ps(v1, xv, a10);
    xv = _mm256_loadu_ps(x1 + i);
    a01 = _mm256_fmadd_ps(v0, xv, a01);
    a11 = _mm256_fmadd_ps(v1, xv, a11);
    xv = _mm256_loadu_ps(x2 + i);
    a02 = _mm256_fmadd_ps(v0, xv, a02);
    a12 = _mm256_fmadd_ps(v1, xv, a12);
    xv = _mm256_loadu_ps(x3 + i);
    a03 = _mm256_fmadd_ps(v0, xv, a03);
    a13 = _mm256_fmadd_ps(v1, xv, a13);
  }
  const float* xs[4] = {x0, x1, x2, x3};
  const __m256 acc0[4] = {a00, a01, a02, a03};
  const __m256 acc1[4] = {a10, a11, a12, a13};
  for (int t = 0; t < 4; ++t) {
    y[(t0 + t) * ldy + r0] = Sum(acc0[t]) + TailDot(w0, xs[t], i, cols);
    y[(t0 + t) * ldy + r0 + 1] = Sum(acc1[t]) + TailDot(w1, xs[t], i, cols);
  }
}

float Dot(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
  int64_t i = 0;
  for (; i + 2 * kWidth <= n; i += 2 * kWidth) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + kWidth), _mm256_loadu_ps(b + i + kWidth), acc1);
  }
  for (; i + kWidth <= n; i += kWidth) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  return Sum(_mm256_add_ps(acc0, acc1)) + TailDot(a, b, i, n);
}

}  // namespace

void GemmF32(const float* w, int64_t n_rows, const float* x, int64_t n_tokens, int64_t cols,
             float* y, int64_t ldy) {
  int64_t r = 0;
  for (; r + 2 <= n_rows; r += 2) {
    const float* w0 = w + r * cols;
    const float* w1 = w0 + cols;
    int64_t t = 0;
    for (; t + 4 <= n_tokens; t += 4) Block2x4(w0, w1, x, cols, t, r, y, ldy);
    for (; t < n_tokens; ++t) {
      y[t * ldy + r] = Dot(w0, x + t * cols, cols);
      y[t * ldy + r + 1] = Dot(w1, x + t * cols, cols);
    }
  }
  for (; r < n_rows; ++r) {
    for (int64_t t = 0; t < n_tokens; ++t) y[t * ldy + r] = Dot(w + r * cols, x + t * cols, cols);
  }
}

}  // namespace h2o::kernels::avx2
