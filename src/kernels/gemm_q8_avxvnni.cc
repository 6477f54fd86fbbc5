// The 32-element quantized types' GemmFn on AVX2 with AVX-VNNI (256-bit
// vpdpbusd): the tile of gemm_tile_q8.h, eight rows per register. Compiled
// with -mavx2 -mfma -mf16c -mavxvnni and run only where CpuHasAvxVnni()
// (gemm_avx2.cc checks before installing it); linkage rules of
// simd_avx2.cc.
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/gemm_tile_q8.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

struct VnniYmm {
  using I = __m256i;
  using F = __m256;
  static constexpr int kRows = 8;
  // One row vector by five tokens: 5 + 5 accumulators and the operands fit
  // in 16 registers.
  static constexpr int kPanelRows = 8;
  static constexpr int kRN = 5;
  static I ZeroI() { return _mm256_setzero_si256(); }
  static I Broadcast(int32_t v) { return _mm256_set1_epi32(v); }
  static I LoadI(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const I*>(p)); }
  static I Dpbusd(I acc, I u, I s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
  static I Low4(I v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0F)); }
  static I High4(I v) { return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F)); }
  static F ZeroF() { return _mm256_setzero_ps(); }
  static F Broadcast(float v) { return _mm256_set1_ps(v); }
  static F LoadHalves(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static F Cvt(I v) { return _mm256_cvtepi32_ps(v); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static void Store(float* p, F v, int n) {
    if (n == kRows) {
      _mm256_storeu_ps(p, v);
    } else {
      const __m256i mask =
          _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      _mm256_maskstore_ps(p, mask, v);
    }
  }
};

}  // namespace

void SetVnniTiles(KernelTable& t) {
  t.q8_0.gemm = Q8Tile<VnniYmm, Q8_0Codes>;
  t.q8_0.pack_panels = Q8PackPanels<VnniYmm, Q8_0Codes>;
  t.q8_0.unpack_panel_row = Q8UnpackPanelRow<VnniYmm, Q8_0Codes>;
  t.q8_0.gemm_panels = Q8TilePanels<VnniYmm, Q8_0Codes>;
  t.q4_0.gemm = Q8Tile<VnniYmm, Q4_0Codes>;
  t.q4_0.pack_panels = Q8PackPanels<VnniYmm, Q4_0Nibbles>;
  t.q4_0.unpack_panel_row = Q8UnpackPanelRow<VnniYmm, Q4_0Nibbles>;
  t.q4_0.gemm_panels = Q8TilePanels<VnniYmm, Q4_0Nibbles>;
  t.q4_1.gemm = Q8Tile<VnniYmm, Q4_1Codes>;
  t.q5_0.gemm = Q8Tile<VnniYmm, Q5_0Codes>;
  t.q5_1.gemm = Q8Tile<VnniYmm, Q5_1Codes>;
}

}  // namespace h2o::kernels::avx2
