// Flush-to-zero and denormals-are-zero for the length of an attention
// call. Softmax probabilities of logits more than ~87 below their row's
// maximum are denormal floats, and on Intel cores every multiply or FMA
// that reads or produces one takes a microcode assist of ~100 cycles: a
// 512-token prefill with sharp attention (logits spread over +-100) ran
// 1.7x slower than with mild logits, most of it in the softmax's
// normalization. Flushed, those probabilities are exactly 0, a change
// below 2^-126 each. The caller's MXCSR comes back at scope exit; off x86
// this does nothing.
#pragma once

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace h2o::kernels {

#if defined(__SSE__) || defined(__x86_64__)
inline constexpr bool kFlushesDenormals = true;
#else
inline constexpr bool kFlushesDenormals = false;
#endif

class ScopedFlushDenormals {
 public:
#if defined(__SSE__) || defined(__x86_64__)
  // MXCSR bits FTZ (15) and DAZ (6).
  ScopedFlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~ScopedFlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned int saved_;
#else
  ScopedFlushDenormals() = default;
#endif

 public:
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;
};

}  // namespace h2o::kernels
