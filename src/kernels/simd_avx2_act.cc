// AVX2 GELU, GeGLU and soft-capping, on the vectorized exp of
// avx2_common.h (no libm call per element). Compiled with AVX2+FMA+F16C
// flags only (see simd_avx2.cc for the rules such files follow).
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2_common.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

constexpr int64_t kWidth = 8;

// tanh(x) lane by lane, computed for |x| and given x's sign (tanh is odd;
// this also keeps tanh(-0) = -0). |x| < 0.625: |x| + |x|^3 P(x^2), the
// Cephes tanhf polynomial, which keeps tiny x exact (the cubic term
// underflows below x's ulp). Beyond: 1 - 2 / (exp(2|x|) + 1); from 0.625
// on, 2 / (e + 1) is at most 0.45, so the subtraction from 1 loses little
// of exp's ~1 ulp. exp overflows to inf past |x| = 44, giving exactly 1,
// as tanh rounds to from |x| = 9 on. NaN stays NaN (through exp).
__m256 Tanh(__m256 x) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign_bit, x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422e-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), ax, ax);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = Exp(_mm256_add_ps(ax, ax));
  const __m256 large =
      _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 abs_tanh =
      _mm256_blendv_ps(large, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
  return _mm256_or_ps(abs_tanh, _mm256_and_ps(x, sign_bit));
}

// gelu(x) = 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = sqrt(2/pi) (x +
// 0.044715 x^3), here -2z = x * (-2 sqrt(2/pi) - 2 sqrt(2/pi) 0.044715 x^2):
// the logistic form has no cancellation where gelu is tiny (x << 0). exp
// overflows to inf for -2z > 88.7 (x < -10.07, |gelu| < 2.4e-38 there),
// giving -0; x^2 overflowing to inf gives x (x > 0) or -0.
__m256 Gelu(__m256 x) {
  const __m256 t = _mm256_fmadd_ps(_mm256_set1_ps(-0.0713548162726f), _mm256_mul_ps(x, x),
                                   _mm256_set1_ps(-1.5957691216057308f));
  const __m256 e = Exp(_mm256_mul_ps(x, t));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// x[i] = op(x[i], y[i]) for i in [0, n); y may be x.
template <typename Op>
void Apply(float* x, const float* y, int64_t n, Op op) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    _mm256_storeu_ps(x + i, op(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  if (i < n) StoreTail(x + i, op(LoadTail(x + i, n - i), LoadTail(y + i, n - i)), n - i);
}

}  // namespace

void GeluInPlace(float* x, int64_t n) {
  Apply(x, x, n, [](__m256 v, __m256) { return Gelu(v); });
}

void GeGluInPlace(float* gate, const float* up, int64_t n) {
  Apply(gate, up, n, [](__m256 g, __m256 u) { return _mm256_mul_ps(Gelu(g), u); });
}

// x / cap by a division, not a reciprocal multiply: one rounding, which
// tanh (condition number at most 1) passes on no larger.
void SoftcapInPlace(float* x, int64_t n, float cap) {
  const __m256 c = _mm256_set1_ps(cap);
  Apply(x, x, n, [c](__m256 v, __m256) { return _mm256_mul_ps(c, Tanh(_mm256_div_ps(v, c))); });
}

}  // namespace h2o::kernels::avx2
