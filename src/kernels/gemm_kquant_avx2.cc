// The K-quants' GemmFn on AVX2 (q2_K ... q6_K). Rows lie along the vector
// lanes, as in the tile of the 32-element types (gemm_tile_q8.h), but with
// AVX2's maddubs, since the K-quants' sub-block scales fold into the madd
// that follows it. Linkage rules of simd_avx2.cc; AVX2 flags.
//
// Per panel of eight rows, the call first widens the rows' super-blocks
// into scratch (WidenPanel): unsigned byte codes, four per row per 32-bit
// lane; int16 scales and the per-16 correction coefficients (mins, or
// offset x scale) as lane pairs; d and dmin as floats. Each token block then
// sweeps that panel four tokens at a time, so the codes are unpacked once
// per panel instead of once per (row, token) as the row dots do. Widening
// costs about 2% of a panel's products at prefill's token counts.
//
// Exactness: per unit of groups the maddubs pair sums are added in int16
// (UnitGroups<Kind>() keeps them below 2^15), madd with the
// scale, added in int32; the correction likewise exact. Each lane then
// takes the reference's float expression (ref_quant_ext.cc DotInt), so a
// pair's value equals dot_row_q8k (simd_avx2_kquants.cc) and the
// reference, bit for bit.
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/avx2_common.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_tile_q8.h"
#include "kernels/kquant_codes_avx2.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

constexpr int kRows = 8;  // one per 32-bit lane
constexpr int kRN = 4;    // tokens per step: 3 x 4 accumulators + operands in 16 registers

// A widened super-block of a panel, byte offsets.
constexpr size_t kCodesAt = 0;                   // 64 groups x 8 rows x 4 codes
constexpr size_t kScalesAt = 64 * 32;            // 16 vectors, one per 16 elements
constexpr size_t kCorrAt = kScalesAt + 16 * 32;  // 8 vectors, pairs of per-16 coefficients
constexpr size_t kDAt = kCorrAt + 8 * 32;        // 8 floats
constexpr size_t kDminAt = kDAt + 32;            // 8 floats
constexpr size_t kWideBytes = kDminAt + 32;
static_assert(kWideBytes <= 48 * 256, "a widened panel fits GemmScratchBytes");

// Groups of four codes whose maddubs pair sums add in int16 without
// overflow before one madd with their scale: a pair is at most
// 2 * max_code * 127 (activation codes are within +-127), and a unit lies
// inside one sub-block.
template <typename Kind>
constexpr int UnitGroups() {
  int groups = Kind::kSubSize / 4;
  while (groups * 2 * Kind::kMaxCode * 127 > 32767) groups /= 2;
  return groups;
}

template <typename Kind, int... k>
void WidenCodes(const uint8_t* rows, size_t row_bytes, int n_valid, int64_t b, uint8_t* out,
                std::integer_sequence<int, k...>) {
  using Block = typename Kind::Block;
  auto chunk = [&](auto kc) {
    constexpr int kChunk = decltype(kc)::value;
    __m256i u[kRows];
    for (int r = 0; r < kRows; ++r) {
      u[r] = r < n_valid ? Kind::template Codes<kChunk>(
                               reinterpret_cast<const Block*>(rows + r * row_bytes)[b])
                         : _mm256_setzero_si256();
    }
    StoreTransposed8(u, out + kCodesAt + kChunk * 8 * 32, 32);
  };
  (chunk(std::integral_constant<int, k>()), ...);
}

// Rows [0, n_valid) of the panel at rows (row_bytes apart) widened into out,
// kWideBytes per super-block; rows past n_valid are zero.
template <typename Kind>
void WidenPanel(const uint8_t* rows, size_t row_bytes, int n_valid, int64_t n_blocks,
                uint8_t* out) {
  using Block = typename Kind::Block;
  constexpr int kPer16 = Kind::kSubSize / 16;  // 16-element parts per sub-block
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* wide = out + b * kWideBytes;
    WidenCodes<Kind>(rows, row_bytes, n_valid, b, wide, std::make_integer_sequence<int, 8>());
    int16_t scales[16][kRows][2] = {};
    int16_t corr[8][kRows][2] = {};
    float d[kRows] = {}, dmin[kRows] = {};
    for (int r = 0; r < n_valid; ++r) {
      const Scales s = Kind::ScalesOf(reinterpret_cast<const Block*>(rows + r * row_bytes)[b]);
      int8_t sc[16], mn[16];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(sc), s.scales);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(mn), s.mins);
      for (int j = 0; j < 16; ++j) {
        const int16_t scale = sc[j / kPer16];
        scales[j][r][0] = scales[j][r][1] = scale;
        corr[j / 2][r][j % 2] = static_cast<int16_t>(Kind::kOffset != 0 ? Kind::kOffset * scale
                                                     : Kind::kHasMin    ? mn[j / kPer16]
                                                                        : 0);
      }
      d[r] = s.d;
      dmin[r] = s.dmin;
    }
    std::memcpy(wide + kScalesAt, scales, sizeof(scales));
    std::memcpy(wide + kCorrAt, corr, sizeof(corr));
    std::memcpy(wide + kDAt, d, sizeof(d));
    std::memcpy(wide + kDminAt, dmin, sizeof(dmin));
  }
}

__m256i Broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm256_set1_epi32(v);
}

__m256i LoadWide(const uint8_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

// y[t * ldy + r] for the panel's rows r < n_valid and RN tokens (x: token t's
// super-blocks at x + t * n_blocks).
template <typename Kind, int RN>
void Micro(const uint8_t* wide, int n_valid, const BlockQ8KAct* x, int64_t n_blocks, float* y,
           int64_t ldy) {
  constexpr int G = UnitGroups<Kind>();
  __m256 acc[RN];
  for (int t = 0; t < RN; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* sb = wide + b * kWideBytes;
    const BlockQ8KAct* xb[RN];
    for (int t = 0; t < RN; ++t) xb[t] = x + t * n_blocks + b;
    __m256i isum[RN];
    for (int t = 0; t < RN; ++t) isum[t] = _mm256_setzero_si256();
    for (int unit = 0; unit < 64 / G; ++unit) {
      __m256i pairs[RN];
      for (int t = 0; t < RN; ++t) pairs[t] = _mm256_setzero_si256();
      for (int j = 0; j < G; ++j) {
        const int g = unit * G + j;
        const __m256i w = LoadWide(sb + kCodesAt + 32 * g);
        for (int t = 0; t < RN; ++t) {
          pairs[t] =
              _mm256_add_epi16(pairs[t], _mm256_maddubs_epi16(w, Broadcast4(xb[t]->qs + 4 * g)));
        }
      }
      const __m256i scale = LoadWide(sb + kScalesAt + 32 * (unit * G / 4));
      for (int t = 0; t < RN; ++t) {
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(pairs[t], scale));
      }
    }
    const __m256 d = _mm256_load_ps(reinterpret_cast<const float*>(sb + kDAt));
    for (int t = 0; t < RN; ++t) {
      __m256i corr = _mm256_setzero_si256();
      if constexpr (Kind::kOffset != 0 || Kind::kHasMin) {
        for (int k = 0; k < 8; ++k) {
          corr = _mm256_add_epi32(corr, _mm256_madd_epi16(LoadWide(sb + kCorrAt + 32 * k),
                                                          Broadcast4(xb[t]->bsums + 2 * k)));
        }
      }
      const __m256 dx = _mm256_set1_ps(xb[t]->d);
      if constexpr (Kind::kOffset != 0) isum[t] = _mm256_sub_epi32(isum[t], corr);
      __m256 term = _mm256_mul_ps(_mm256_mul_ps(d, dx), _mm256_cvtepi32_ps(isum[t]));
      if constexpr (Kind::kHasMin) {
        const __m256 dmin = _mm256_load_ps(reinterpret_cast<const float*>(sb + kDminAt));
        term =
            _mm256_sub_ps(term, _mm256_mul_ps(_mm256_mul_ps(dmin, dx), _mm256_cvtepi32_ps(corr)));
      }
      acc[t] = _mm256_add_ps(acc[t], term);
    }
  }
  const __m256i mask = TailMask(n_valid);
  for (int t = 0; t < RN; ++t) _mm256_maskstore_ps(y + t * ldy, mask, acc[t]);
}

template <typename Kind>
using MicroFn = void (*)(const uint8_t*, int, const BlockQ8KAct*, int64_t, float*, int64_t);

template <typename Kind, int... rn>
constexpr auto MicroTable(std::integer_sequence<int, rn...>) {
  return std::array<MicroFn<Kind>, sizeof...(rn)>{&Micro<Kind, rn + 1>...};
}

template <TensorType kType, typename Kind>
void KQuantTile(const void* w, size_t row_bytes, int64_t n_rows, const void* x, int64_t n_tokens,
                int64_t cols, float* y, int64_t ldy, void* scratch) {
  if (n_tokens < kMinTileTokens) {
    DotLoop(kType, w, row_bytes, n_rows, x, n_tokens, cols, y, ldy);
    return;
  }
  static constexpr auto kMicro = MicroTable<Kind>(std::make_integer_sequence<int, kRN>());
  const int64_t n_blocks = cols / 256;
  const auto* acts = static_cast<const BlockQ8KAct*>(x);
  const auto* base = static_cast<const uint8_t*>(w);
  uint8_t* wide = Align64(scratch);
  for (int64_t r = 0; r < n_rows; r += kRows) {
    const int n_valid = n_rows - r < kRows ? static_cast<int>(n_rows - r) : kRows;
    WidenPanel<Kind>(base + r * row_bytes, row_bytes, n_valid, n_blocks, wide);
    for (int64_t t = 0; t < n_tokens; t += kRN) {
      const int64_t rn = n_tokens - t < kRN ? n_tokens - t : kRN;
      kMicro[rn - 1](wide, n_valid, acts + t * n_blocks, n_blocks, y + t * ldy + r, ldy);
    }
  }
}

}  // namespace

void SetKQuantTiles(KernelTable& t) {
  t.q2_k.gemm = KQuantTile<TensorType::kQ2_K, KindQ2_K>;
  t.q3_k.gemm = KQuantTile<TensorType::kQ3_K, KindQ3_K>;
  t.q4_k.gemm = KQuantTile<TensorType::kQ4_K, KindQ4_K>;
  t.q5_k.gemm = KQuantTile<TensorType::kQ5_K, KindQ5_K>;
  t.q6_k.gemm = KQuantTile<TensorType::kQ6_K, KindQ6_K>;
  for (TypeKernels* k : {&t.q2_k, &t.q3_k, &t.q4_k, &t.q5_k, &t.q6_k}) {
    k->gemm_kind = "AVX2 maddubs tile, panels widened per call (12+ tokens; row dots below)";
  }
}

}  // namespace h2o::kernels::avx2
