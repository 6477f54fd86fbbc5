// The 32-element quantized types' GemmFn on AVX-512 VNNI (512-bit
// vpdpbusd): the tile of gemm_tile_q8.h, sixteen rows per register.
// Compiled with the AVX-512 flags of simd_avx512.cc plus -mavx512vnni and
// run only where CpuHasAvx512Vnni() (gemm_avx512.cc checks); linkage rules
// of simd_avx512.cc.
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/gemm_tile_q8.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx512 {
namespace {

struct VnniZmm {
  using I = __m512i;
  using F = __m512;
  static constexpr int kRows = 16;
  // Two row vectors by four tokens: 8 + 8 accumulators of 32 registers.
  static constexpr int kPanelRows = 32;
  static constexpr int kRN = 4;
  static I ZeroI() { return _mm512_setzero_si512(); }
  static I Broadcast(int32_t v) { return _mm512_set1_epi32(v); }
  static I LoadI(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static I Dpbusd(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static I Low4(I v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0F)); }
  static I High4(I v) { return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F)); }
  static F ZeroF() { return _mm512_setzero_ps(); }
  static F Broadcast(float v) { return _mm512_set1_ps(v); }
  static F LoadHalves(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static F Cvt(I v) { return _mm512_cvtepi32_ps(v); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static void Store(float* p, F v, int n) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
  }
};

}  // namespace

void SetVnniTiles(KernelTable& t) {
  t.q8_0.gemm = Q8Tile<VnniZmm, Q8_0Codes>;
  t.q8_0.pack_panels = Q8PackPanels<VnniZmm, Q8_0Codes>;
  t.q8_0.unpack_panel_row = Q8UnpackPanelRow<VnniZmm, Q8_0Codes>;
  t.q8_0.gemm_panels = Q8TilePanels<VnniZmm, Q8_0Codes>;
  t.q4_0.gemm = Q8Tile<VnniZmm, Q4_0Codes>;
  t.q4_0.pack_panels = Q8PackPanels<VnniZmm, Q4_0Nibbles>;
  t.q4_0.unpack_panel_row = Q8UnpackPanelRow<VnniZmm, Q4_0Nibbles>;
  t.q4_0.gemm_panels = Q8TilePanels<VnniZmm, Q4_0Nibbles>;
  t.q4_1.pack_panels = Q8PackPanels<VnniZmm, Q4_1Nibbles>;
  t.q4_1.unpack_panel_row = Q8UnpackPanelRow<VnniZmm, Q4_1Nibbles>;
  t.q4_1.gemm_panels = Q8TilePanels<VnniZmm, Q4_1Nibbles>;
  t.q4_1.gemm = Q8Tile<VnniZmm, Q4_1Codes>;
  t.q5_0.gemm = Q8Tile<VnniZmm, Q5_0Codes>;
  t.q5_1.gemm = Q8Tile<VnniZmm, Q5_1Codes>;
  for (TypeKernels* k : {&t.q8_0, &t.q4_0, &t.q4_1})
    k->gemm_kind = "AVX-512 VNNI vpdpbusd tile, panels packed at load";
  for (TypeKernels* k : {&t.q5_0, &t.q5_1}) {
    k->gemm_kind = "AVX-512 VNNI vpdpbusd tile, panels packed per call";
  }
}

}  // namespace h2o::kernels::avx512
