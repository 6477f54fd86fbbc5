// AVX2 RoPE: angles as the reference (double cos/sin per pair, shared by the
// heads), for up to kChunk pairs at a time; the rotation in double, four
// pairs (NeoX) or two pairs (normal) per register, with a separate multiply
// and add per term as the reference, so the result is bit-identical.
//
// Compiled with -mavx2 -mfma -mf16c -ffp-contract=off like simd_avx2.cc and
// under the same rules (see there): internal helpers only, no inline
// functions or templates from headers.
#include <immintrin.h>
#include <math.h>

#include <cstdint>

#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

__m256d Widen(__m128 v) { return _mm256_cvtps_pd(v); }

// Interleaved pairs (a, b) of m pairs at v: per element cos twice and
// (-sin, +sin), so [a b] * [c c] + [b a] * [-s s] = [a c - b s, b c + a s].
void RotateInterleaved(float* v, int64_t m, const double* cos2, const double* sin2) {
  int64_t k = 0;
  for (; k + 4 <= 2 * m; k += 4) {
    const __m256d ab = Widen(_mm_loadu_ps(v + k));
    const __m256d ba = _mm256_permute_pd(ab, 0b0101);
    const __m256d rot = _mm256_add_pd(_mm256_mul_pd(ab, _mm256_load_pd(cos2 + k)),
                                      _mm256_mul_pd(ba, _mm256_load_pd(sin2 + k)));
    _mm_storeu_ps(v + k, _mm256_cvtpd_ps(rot));
  }
  for (; k < 2 * m; k += 2) {  // one pair left when m is odd
    const double a0 = v[k];
    const double b0 = v[k + 1];
    const double c = cos2[k];
    const double s = sin2[k + 1];
    v[k] = static_cast<float>(a0 * c - b0 * s);
    v[k + 1] = static_cast<float>(a0 * s + b0 * c);
  }
}

// Pairs (a[j], b[j]) for j < m.
void RotateSplit(float* a, float* b, int64_t m, const double* cos1, const double* sin1) {
  int64_t j = 0;
  for (; j + 4 <= m; j += 4) {
    const __m256d a0 = Widen(_mm_loadu_ps(a + j));
    const __m256d b0 = Widen(_mm_loadu_ps(b + j));
    const __m256d c = _mm256_load_pd(cos1 + j);
    const __m256d s = _mm256_load_pd(sin1 + j);
    _mm_storeu_ps(a + j,
                  _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_mul_pd(a0, c), _mm256_mul_pd(b0, s))));
    _mm_storeu_ps(b + j,
                  _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(a0, s), _mm256_mul_pd(b0, c))));
  }
  for (; j < m; ++j) {
    const double a0 = a[j];
    const double b0 = b[j];
    a[j] = static_cast<float>(a0 * cos1[j] - b0 * sin1[j]);
    b[j] = static_cast<float>(a0 * sin1[j] + b0 * cos1[j]);
  }
}

}  // namespace

void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, const RopeParams& rope) {
  constexpr int64_t kChunk = 64;
  const int64_t half = rope.n_rot / 2;
  const bool interleaved = rope.mode == RopeMode::kNormal;
  // Interleaved: two entries per pair (see RotateInterleaved); NeoX: one.
  alignas(32) double cos_buf[2 * kChunk];
  alignas(32) double sin_buf[2 * kChunk];
  for (int64_t i0 = 0; i0 < half; i0 += kChunk) {
    const int64_t m = half - i0 < kChunk ? half - i0 : kChunk;
    for (int64_t j = 0; j < m; ++j) {
      const double theta = static_cast<double>(pos) * rope.inv_freq[i0 + j];
      const double c = cos(theta) * rope.mscale;
      const double s = sin(theta) * rope.mscale;
      if (interleaved) {
        cos_buf[2 * j] = c;
        cos_buf[2 * j + 1] = c;
        sin_buf[2 * j] = -s;
        sin_buf[2 * j + 1] = s;
      } else {
        cos_buf[j] = c;
        sin_buf[j] = s;
      }
    }
    for (int64_t h = 0; h < n_heads; ++h) {
      float* head = x + h * head_dim;
      if (interleaved) {
        RotateInterleaved(head + 2 * i0, m, cos_buf, sin_buf);
      } else {
        RotateSplit(head + i0, head + i0 + half, m, cos_buf, sin_buf);
      }
    }
  }
}

}  // namespace h2o::kernels::avx2
