// AVX-512 GemmFn entries of the float types: the tile of gemm_tile_float.h
// on 512-bit registers (twice the FMA width of the AVX2 tile, and 32
// registers for a larger block). Compiled and linked under the rules of
// simd_avx512.cc.
#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/gemm_tile_float.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx512 {
namespace {

__mmask16 TailMask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

struct Avx512 {
  using V = __m512;
  static constexpr int64_t kLanes = 16;
  // 4 x 6 accumulators + 4 weight vectors + 1 activation of 32 registers.
  static constexpr int kRM = 4;
  static constexpr int kRN = 6;
  static constexpr int kDecodeRows = 8;
  static V Zero() { return _mm512_setzero_ps(); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V LoadX(const float* p) { return _mm512_loadu_ps(p); }
  static V LoadXTail(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(TailMask(n), p); }

  // The eight lanes the AVX2 tile's tree (ReduceInEights) starts from:
  // b_l = a_l + a_{l+8}.
  static __m256 Eight(V a) {
    return _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  }
};

__m256i LoadHalves(const uint16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
__m256i LoadHalvesTail(const uint16_t* p, int64_t n) {
  return _mm256_maskz_loadu_epi16(TailMask(n), p);
}
__m512 WidenBF16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

struct F32Weights {
  using Elem = float;
  static __m512 Load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 LoadTail(const float* p, int64_t n) {
    return _mm512_maskz_loadu_ps(TailMask(n), p);
  }
};
struct F16Weights {
  using Elem = uint16_t;
  static __m512 Load(const uint16_t* p) { return _mm512_cvtph_ps(LoadHalves(p)); }
  static __m512 LoadTail(const uint16_t* p, int64_t n) {
    return _mm512_cvtph_ps(LoadHalvesTail(p, n));
  }
};
struct BF16Weights {
  using Elem = uint16_t;
  static __m512 Load(const uint16_t* p) { return WidenBF16(LoadHalves(p)); }
  static __m512 LoadTail(const uint16_t* p, int64_t n) { return WidenBF16(LoadHalvesTail(p, n)); }
};

// CPUID leaf 7, ECX bit 11; the ZMM state is already known to be enabled
// (the AVX-512 table runs).
bool CpuHasAvx512Vnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 11)) != 0;
}

}  // namespace

void SetGemmTiles(KernelTable& t) {
  t.f32.gemm = FloatTile<Avx512, F32Weights>;
  t.f16.gemm = FloatTile<Avx512, F16Weights>;
  t.bf16.gemm = FloatTile<Avx512, BF16Weights>;
  for (TypeKernels* k : {&t.f32, &t.f16, &t.bf16}) k->gemm_kind = "AVX-512 FMA tile";
  if (CpuHasAvx512Vnni()) SetVnniTiles(t);
}

}  // namespace h2o::kernels::avx512
