// The 32-element quantized types' GemmFn on AVX2 without VNNI: the tile of
// gemm_tile_q8.h, its vpdpbusd made of maddubs (unsigned codes by signed
// activation codes, pairs summed in int16) and a madd by ones. Exact where
// a pair stays below 2^15: codes up to 31 (q4_*, q5_*) by activations
// within +-127 are; q8_0's codes + 128 are not, so q8_0 is stored signed
// and multiplied as |w| by x with w's sign (Q8_0SignedCodes), which is
// exact for codes within +-127 (the quantizer's range; a -128 in a file
// gives 128 x 127 pairs, still below 2^15). q8_0 and the 4- and 5-bit
// types are packed into panels at load, as on AVX-VNNI: decode then reads
// eight rows' codes per vector load instead of unpacking a row at a time,
// which took q4_0 decode from compute-bound (17 GB/s) to 29 GB/s of
// weights, 1B shape, 2 threads, Zen 3. Linkage rules of simd_avx2.cc; AVX2 flags.
#include <immintrin.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/gemm_tile_q8.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

struct MaddubsYmm : Ymm8Rows {
  static I PairsToInt32(I pairs) { return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)); }
  static I Dpbusd(I acc, I u, I s) {
    return _mm256_add_epi32(acc, PairsToInt32(_mm256_maddubs_epi16(u, s)));
  }
  static I DotSigned(I acc, I w, I x) {
    return _mm256_add_epi32(
        acc, PairsToInt32(_mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(x, w))));
  }
};

template <TensorType kType, typename Kind>
void TileOrDotLoop(const void* w, size_t row_bytes, int64_t n_rows, const void* x, int64_t n_tokens,
                   int64_t cols, float* y, int64_t ldy, void* scratch) {
  if (n_tokens < kMinTileTokens) {
    DotLoop(kType, w, row_bytes, n_rows, x, n_tokens, cols, y, ldy);
  } else {
    Q8Tile<MaddubsYmm, Kind>(w, row_bytes, n_rows, x, n_tokens, cols, y, ldy, scratch);
  }
}

}  // namespace

void SetMaddubsTiles(KernelTable& t) {
  t.q8_0.gemm = TileOrDotLoop<TensorType::kQ8_0, Q8_0SignedCodes>;
  t.q8_0.pack_panels = Q8PackPanels<MaddubsYmm, Q8_0SignedCodes>;
  t.q8_0.unpack_panel_row = Q8UnpackPanelRow<MaddubsYmm, Q8_0SignedCodes>;
  t.q8_0.gemm_panels = Q8TilePanels<MaddubsYmm, Q8_0SignedCodes>;
  t.q4_0.gemm = TileOrDotLoop<TensorType::kQ4_0, Q4_0Codes>;
  t.q4_0.pack_panels = Q8PackPanels<MaddubsYmm, Q4_0Nibbles>;
  t.q4_0.unpack_panel_row = Q8UnpackPanelRow<MaddubsYmm, Q4_0Nibbles>;
  t.q4_0.gemm_panels = Q8TilePanels<MaddubsYmm, Q4_0Nibbles>;
  t.q4_1.pack_panels = Q8PackPanels<MaddubsYmm, Q4_1Nibbles>;
  t.q4_1.unpack_panel_row = Q8UnpackPanelRow<MaddubsYmm, Q4_1Nibbles>;
  t.q4_1.gemm_panels = Q8TilePanels<MaddubsYmm, Q4_1Nibbles>;
  t.q5_0.pack_panels = Q8PackPanels<MaddubsYmm, Q5_0Nibbles>;
  t.q5_0.unpack_panel_row = Q8UnpackPanelRow<MaddubsYmm, Q5_0Nibbles>;
  t.q5_0.gemm_panels = Q8TilePanels<MaddubsYmm, Q5_0Nibbles>;
  t.q5_1.pack_panels = Q8PackPanels<MaddubsYmm, Q5_1Nibbles>;
  t.q5_1.unpack_panel_row = Q8UnpackPanelRow<MaddubsYmm, Q5_1Nibbles>;
  t.q5_1.gemm_panels = Q8TilePanels<MaddubsYmm, Q5_1Nibbles>;
  t.q4_1.gemm = TileOrDotLoop<TensorType::kQ4_1, Q4_1Codes>;
  t.q5_0.gemm = TileOrDotLoop<TensorType::kQ5_0, Q5_0Codes>;
  t.q5_1.gemm = TileOrDotLoop<TensorType::kQ5_1, Q5_1Codes>;
  for (TypeKernels* k : {&t.q8_0, &t.q4_0, &t.q4_1, &t.q5_0, &t.q5_1})
    k->gemm_kind = "AVX2 maddubs tile, panels packed at load";
}

}  // namespace h2o::kernels::avx2
