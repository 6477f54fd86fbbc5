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

struct VnniYmm : Ymm8Rows {
  static I Dpbusd(I acc, I u, I s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
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
  t.q4_1.pack_panels = Q8PackPanels<VnniYmm, Q4_1Nibbles>;
  t.q4_1.unpack_panel_row = Q8UnpackPanelRow<VnniYmm, Q4_1Nibbles>;
  t.q4_1.gemm_panels = Q8TilePanels<VnniYmm, Q4_1Nibbles>;
  t.q5_0.pack_panels = Q8PackPanels<VnniYmm, Q5_0Nibbles>;
  t.q5_0.unpack_panel_row = Q8UnpackPanelRow<VnniYmm, Q5_0Nibbles>;
  t.q5_0.gemm_panels = Q8TilePanels<VnniYmm, Q5_0Nibbles>;
  t.q5_1.pack_panels = Q8PackPanels<VnniYmm, Q5_1Nibbles>;
  t.q5_1.unpack_panel_row = Q8UnpackPanelRow<VnniYmm, Q5_1Nibbles>;
  t.q5_1.gemm_panels = Q8TilePanels<VnniYmm, Q5_1Nibbles>;
  t.q4_1.gemm = Q8Tile<VnniYmm, Q4_1Codes>;
  t.q5_0.gemm = Q8Tile<VnniYmm, Q5_0Codes>;
  t.q5_1.gemm = Q8Tile<VnniYmm, Q5_1Codes>;
  for (TypeKernels* k : {&t.q8_0, &t.q4_0, &t.q4_1, &t.q5_0, &t.q5_1})
    k->gemm_kind = "AVX-VNNI vpdpbusd tile, panels packed at load";
}

}  // namespace h2o::kernels::avx2
