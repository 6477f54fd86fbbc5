// Software prefetch for the row-streaming kernels (the dots of decode's
// matvec, the attention row kernels): at decode these run close to one
// core's DRAM bandwidth, and the hardware prefetcher alone leaves them
// waiting on lines; hinting a kilobyte ahead measured 10-20% faster (Zen 1).
// Internal linkage on purpose: the AVX2 files that include this may not
// odr-use inline functions from headers (see simd_avx2.cc).
#pragma once

#include <xmmintrin.h>

#include <cstdint>

namespace h2o::kernels {
namespace {

constexpr int64_t kPrefetchBytes = 1024;

// The attention row kernels hint further ahead: a K or V row is only 68-128
// bytes of work, so a kilobyte is too few rows to cover the wait for the
// shared cache that holds a long K/V cache (17-80 MiB for the 110M shape at
// depth 4096). On the Sapphire Rapids dev VM, 2 KiB (with the q8_0 V sum,
// which had no hint) decoded that shape at depth 4096 3-6% faster with H2O
// and 25% faster with the full cache, both with q8_0 K/V (BENCHMARKS #17).
// On a Zen 5 VM (about 150 ns to DRAM), 4 KiB read 32 sequences' f16 heads
// from DRAM 12-15% faster than 2 KiB at 128 and 512 slots and 25-35% at 40
// (a batched decode step's); 8 KiB was no better at 128 and 512.
constexpr int64_t kKvRowPrefetchBytes = 4096;

// Hints into L1 the 64-byte lines of the `bytes` bytes that start `ahead`
// bytes past `at`; prefetches never fault, so hinting past the end of a row
// is harmless. Always inlined: GCC 12 finds an out-of-line copy free of
// side effects (a prefetch is not one to it) and deletes the calls, which
// it did in every float GEMM tile until this attribute.
[[maybe_unused, gnu::always_inline]] inline void PrefetchAhead(
    const void* at, int64_t bytes, int64_t ahead_bytes = kPrefetchBytes) {
  const char* ahead = static_cast<const char*>(at) + ahead_bytes;
  for (int64_t line = 0; line < bytes; line += 64) _mm_prefetch(ahead + line, _MM_HINT_T0);
}

}  // namespace
}  // namespace h2o::kernels
