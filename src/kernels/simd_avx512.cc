// AVX-512 (F, BW, VL, DQ) backend: 16 floats per register.
//
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c and
// run only after CpuHasAvx512(); the same linkage rules as simd_avx2.cc
// apply (internal helpers only, no header inline functions or templates).
// The algorithms are those of the AVX2 backend at twice the width, op for
// op (Exp is the same sequence of roundings, so both backends give the
// same exp bits); tails use AVX-512 masks, which never fault on masked-out
// lanes. RoPE is the AVX2 one: it is bound by the per-pair cos/sin.
#include <immintrin.h>
#include <math.h>

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/kv_rows_block.h"
#include "kernels/prefetch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx512 {
namespace {

constexpr int64_t kWidth = 16;

// Lanes [0, n) set, n in [0, 16].
__mmask16 TailMask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }

__m512 LoadTail(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(TailMask(n), p); }
void StoreTail(float* p, __m512 v, int64_t n) { _mm512_mask_storeu_ps(p, TailMask(n), v); }

__m512 HalvesToFloat(__m256i h) { return _mm512_cvtph_ps(h); }
__m512 BrainToFloat(__m256i b) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16));
}
__m256i Load16(const uint16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
__m256i Load16Tail(const uint16_t* p, int64_t n) {
  return _mm256_maskz_loadu_epi16(TailMask(n), p);
}

// 16 int8 -> 16 floats.
__m512 Int8x16ToFloat(__m128i q) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)); }
__m512 LoadQ8x16(const int8_t* q) {
  return Int8x16ToFloat(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
}

float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

__m512d LowToDouble(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
__m512d HighToDouble(__m512 v) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)); }

// As avx2's DotFloats, hinting the weights ahead the same way (w, of
// Element type, is only prefetched).
template <typename Element, typename Load, typename LoadTailFn>
float DotFloats(const Element* w, Load load, LoadTailFn load_tail, const float* x, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps();
  __m512 acc1 = _mm512_setzero_ps();
  __m512 acc2 = _mm512_setzero_ps();
  __m512 acc3 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 4 * kWidth <= n; i += 4 * kWidth) {
    PrefetchAhead(w + i, 4 * kWidth * sizeof(Element));
    acc0 = _mm512_fmadd_ps(load(i), _mm512_loadu_ps(x + i), acc0);
    acc1 = _mm512_fmadd_ps(load(i + 16), _mm512_loadu_ps(x + i + 16), acc1);
    acc2 = _mm512_fmadd_ps(load(i + 32), _mm512_loadu_ps(x + i + 32), acc2);
    acc3 = _mm512_fmadd_ps(load(i + 48), _mm512_loadu_ps(x + i + 48), acc3);
  }
  for (; i + kWidth <= n; i += kWidth) {
    acc0 = _mm512_fmadd_ps(load(i), _mm512_loadu_ps(x + i), acc0);
  }
  if (i < n) acc1 = _mm512_fmadd_ps(load_tail(i, n - i), LoadTail(x + i, n - i), acc1);
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

__m512 BlockSumQ8_0(const BlockQ8_0& block, const float* x) {
  const __m512 s = _mm512_mul_ps(LoadQ8x16(block.qs), _mm512_loadu_ps(x));
  return _mm512_fmadd_ps(LoadQ8x16(block.qs + 16), _mm512_loadu_ps(x + 16), s);
}

// q - 8 of a Q4_0 block: v[0] elements 0..15 (low nibbles), v[1] 16..31.
struct Q4Floats {
  __m512 v[2];
};
Q4Floats UnpackQ4_0(const BlockQ4_0& block) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.qs));
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, nibble), eight);
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), nibble), eight);
  return {{Int8x16ToFloat(lo), Int8x16ToFloat(hi)}};
}

__m512 BlockSumQ4_0(const BlockQ4_0& block, const float* x) {
  const Q4Floats w = UnpackQ4_0(block);
  const __m512 s = _mm512_mul_ps(w.v[0], _mm512_loadu_ps(x));
  return _mm512_fmadd_ps(w.v[1], _mm512_loadu_ps(x + 16), s);
}

template <typename Block, typename BlockSum>
float DotBlocks(const void* row, const float* x, int64_t n, BlockSum block_sum) {
  const auto* blocks = static_cast<const Block*>(row);
  const int64_t n_blocks = n / 32;
  __m512 acc0 = _mm512_setzero_ps();
  __m512 acc1 = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    acc0 = _mm512_fmadd_ps(_mm512_set1_ps(HalfToFloat(blocks[b].d)),
                           block_sum(blocks[b], x + b * 32), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_set1_ps(HalfToFloat(blocks[b + 1].d)),
                           block_sum(blocks[b + 1], x + (b + 1) * 32), acc1);
  }
  if (b < n_blocks) {
    acc0 = _mm512_fmadd_ps(_mm512_set1_ps(HalfToFloat(blocks[b].d)),
                           block_sum(blocks[b], x + b * 32), acc0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

// Same steps and constants as avx2's Exp (see there).
__m512 Exp(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), p, r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  const __m512i ni = _mm512_cvtps_epi32(n);
  const __m512i n1 = _mm512_srai_epi32(ni, 1);
  const __m512i n2 = _mm512_sub_epi32(ni, n1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 scale1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  const __m512 scale2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
  return _mm512_mul_ps(_mm512_mul_ps(p, scale1), scale2);
}

__m512 SwiGlu(__m512 g, __m512 up) {
  const __m512 e = Exp(_mm512_xor_ps(g, _mm512_set1_ps(-0.0f)));  // exp(-g)
  return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), up);
}

}  // namespace

void ExpRow(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) _mm512_storeu_ps(y + i, Exp(_mm512_loadu_ps(x + i)));
  if (i < n) StoreTail(y + i, Exp(LoadTail(x + i, n - i)), n - i);
}

// --- Row kernels ---

float DotRowF32(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const float*>(row);
  return DotFloats(
      w, [w](int64_t i) { return _mm512_loadu_ps(w + i); },
      [w](int64_t i, int64_t m) { return LoadTail(w + i, m); }, x, n);
}

float DotRowF16(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const uint16_t*>(row);
  return DotFloats(
      w, [w](int64_t i) { return HalvesToFloat(Load16(w + i)); },
      [w](int64_t i, int64_t m) { return HalvesToFloat(Load16Tail(w + i, m)); }, x, n);
}

float DotRowBF16(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const uint16_t*>(row);
  return DotFloats(
      w, [w](int64_t i) { return BrainToFloat(Load16(w + i)); },
      [w](int64_t i, int64_t m) { return BrainToFloat(Load16Tail(w + i, m)); }, x, n);
}

float DotRowQ8_0(const void* row, const float* x, int64_t n) {
  return DotBlocks<BlockQ8_0>(row, x, n, BlockSumQ8_0);
}

float DotRowQ4_0(const void* row, const float* x, int64_t n) {
  return DotBlocks<BlockQ4_0>(row, x, n, BlockSumQ4_0);
}

void DequantizeRowF16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) _mm512_storeu_ps(dst + i, HalvesToFloat(Load16(in + i)));
  if (i < n) StoreTail(dst + i, HalvesToFloat(Load16Tail(in + i, n - i)), n - i);
}

void DequantizeRowBF16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) _mm512_storeu_ps(dst + i, BrainToFloat(Load16(in + i)));
  if (i < n) StoreTail(dst + i, BrainToFloat(Load16Tail(in + i, n - i)), n - i);
}

void DequantizeRowQ8_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < n / 32; ++b, dst += 32) {
    const __m512 d = _mm512_set1_ps(HalfToFloat(blocks[b].d));
    _mm512_storeu_ps(dst, _mm512_mul_ps(d, LoadQ8x16(blocks[b].qs)));
    _mm512_storeu_ps(dst + 16, _mm512_mul_ps(d, LoadQ8x16(blocks[b].qs + 16)));
  }
}

void DequantizeRowQ4_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ4_0*>(src);
  for (int64_t b = 0; b < n / 32; ++b, dst += 32) {
    const __m512 d = _mm512_set1_ps(HalfToFloat(blocks[b].d));
    const Q4Floats w = UnpackQ4_0(blocks[b]);
    _mm512_storeu_ps(dst, _mm512_mul_ps(d, w.v[0]));
    _mm512_storeu_ps(dst + 16, _mm512_mul_ps(d, w.v[1]));
  }
}

// --- Vector operations (see the AVX2 versions for the reasoning) ---

void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps) {
  __m512d acc0 = _mm512_setzero_pd();
  __m512d acc1 = _mm512_setzero_pd();
  __m512d acc2 = _mm512_setzero_pd();
  __m512d acc3 = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 2 * kWidth <= n; i += 2 * kWidth) {
    const __m512 a = _mm512_loadu_ps(x + i);
    const __m512 b = _mm512_loadu_ps(x + i + 16);
    const __m512d a0 = LowToDouble(a), a1 = HighToDouble(a);
    const __m512d b0 = LowToDouble(b), b1 = HighToDouble(b);
    acc0 = _mm512_fmadd_pd(a0, a0, acc0);
    acc1 = _mm512_fmadd_pd(a1, a1, acc1);
    acc2 = _mm512_fmadd_pd(b0, b0, acc2);
    acc3 = _mm512_fmadd_pd(b1, b1, acc3);
  }
  for (; i < n; i += kWidth) {
    const __m512 a = LoadTail(x + i, n - i < kWidth ? n - i : kWidth);
    const __m512d a0 = LowToDouble(a), a1 = HighToDouble(a);
    acc0 = _mm512_fmadd_pd(a0, a0, acc0);
    acc1 = _mm512_fmadd_pd(a1, a1, acc1);
  }
  const double sum_sq =
      _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(acc0, acc1), _mm512_add_pd(acc2, acc3)));
  const __m512 scale =
      _mm512_set1_ps(static_cast<float>(1.0 / sqrt(sum_sq / static_cast<double>(n) + eps)));
  i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const __m512 y =
        _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), scale), _mm512_loadu_ps(weight + i));
    _mm512_storeu_ps(out + i, y);
  }
  if (i < n) {
    const int64_t m = n - i;
    StoreTail(out + i,
              _mm512_mul_ps(_mm512_mul_ps(LoadTail(x + i, m), scale), LoadTail(weight + i, m)), m);
  }
}

void SoftmaxInPlace(float* x, int64_t n) {
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 vmax = neg_inf;
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
  if (i < n) vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(neg_inf, TailMask(n - i), x + i));
  const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512d sum0 = _mm512_setzero_pd();
  __m512d sum1 = _mm512_setzero_pd();
  for (i = 0; i + kWidth <= n; i += kWidth) {
    const __m512 e = Exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), max));
    _mm512_storeu_ps(x + i, e);
    sum0 = _mm512_add_pd(sum0, LowToDouble(e));
    sum1 = _mm512_add_pd(sum1, HighToDouble(e));
  }
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    // Lanes past the end read as 0, whose exp(0 - max) may be huge: zero them.
    const __m512 e =
        _mm512_maskz_mov_ps(mask, Exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), max)));
    _mm512_mask_storeu_ps(x + i, mask, e);
    sum0 = _mm512_add_pd(sum0, LowToDouble(e));
    sum1 = _mm512_add_pd(sum1, HighToDouble(e));
  }
  const __m512 inv =
      _mm512_set1_ps(static_cast<float>(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(sum0, sum1))));
  for (i = 0; i + kWidth <= n; i += kWidth) {
    _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), inv));
  }
  if (i < n) StoreTail(x + i, _mm512_mul_ps(LoadTail(x + i, n - i), inv), n - i);
}

void SwiGluInPlace(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    _mm512_storeu_ps(gate + i, SwiGlu(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
  }
  if (i < n) StoreTail(gate + i, SwiGlu(LoadTail(gate + i, n - i), LoadTail(up + i, n - i)), n - i);
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  const __m512 va = _mm512_set1_ps(a);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  if (i < n)
    StoreTail(y + i, _mm512_fmadd_ps(va, LoadTail(x + i, n - i), LoadTail(y + i, n - i)), n - i);
}

namespace {

// kBlocks 32-column blocks of kHeads heads' outputs, kept in registers
// (two per head and block) over all the rows; each row's blocks are widened
// once for all the heads. Every output element takes the AVX2 kernel's
// operations (coefficient p * scale, one fused multiply-add per row, rows
// in order), so both backends give the same bits whatever the heads of a
// call.
template <int kHeads, int kBlocks>
void WeightedSumBlocksQ8_0(const float* p, int64_t p_stride, const BlockQ8_0* blocks, int64_t nb,
                           int64_t b0, int64_t n_rows, int64_t d, float* out) {
  __m512 acc[kHeads][kBlocks][2];
  for (int h = 0; h < kHeads; ++h) {
    for (int k = 0; k < kBlocks; ++k) {
      acc[h][k][0] = _mm512_loadu_ps(out + h * d + 32 * (b0 + k));
      acc[h][k][1] = _mm512_loadu_ps(out + h * d + 32 * (b0 + k) + 16);
    }
  }
  for (int64_t r = 0; r < n_rows; ++r) {
    PrefetchAhead(blocks + r * nb + b0, kBlocks * static_cast<int64_t>(sizeof(BlockQ8_0)),
                  kKvRowPrefetchBytes);
    __m512 w[kBlocks][2];
    float scale[kBlocks];
    for (int k = 0; k < kBlocks; ++k) {
      const BlockQ8_0& block = blocks[r * nb + b0 + k];
      const auto* codes = reinterpret_cast<const __m128i*>(block.qs);
      w[k][0] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(codes)));
      w[k][1] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(codes + 1)));
      scale[k] = _cvtsh_ss(block.d);
    }
    for (int h = 0; h < kHeads; ++h) {
      for (int k = 0; k < kBlocks; ++k) {
        const __m512 coef = _mm512_set1_ps(p[h * p_stride + r] * scale[k]);
        acc[h][k][0] = _mm512_fmadd_ps(coef, w[k][0], acc[h][k][0]);
        acc[h][k][1] = _mm512_fmadd_ps(coef, w[k][1], acc[h][k][1]);
      }
    }
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int k = 0; k < kBlocks; ++k) {
      _mm512_storeu_ps(out + h * d + 32 * (b0 + k), acc[h][k][0]);
      _mm512_storeu_ps(out + h * d + 32 * (b0 + k) + 16, acc[h][k][1]);
    }
  }
}

// All blocks of kHeads heads, as many blocks per pass over the rows as 16
// accumulators hold: a lone head's chain of one add per row per register
// would otherwise wait on the multiply-add latency.
template <int kHeads>
void WeightedSumHeadsQ8_0(const float* p, int64_t p_stride, const BlockQ8_0* blocks, int64_t nb,
                          int64_t n_rows, int64_t d, float* out) {
  constexpr int kMaxBlocks = kHeads <= 2 ? 4 : kHeads <= 4 ? 2 : 1;
  int64_t b = 0;
  if constexpr (kMaxBlocks >= 4) {
    for (; b + 4 <= nb; b += 4) {
      WeightedSumBlocksQ8_0<kHeads, 4>(p, p_stride, blocks, nb, b, n_rows, d, out);
    }
  }
  if constexpr (kMaxBlocks >= 2) {
    for (; b + 2 <= nb; b += 2) {
      WeightedSumBlocksQ8_0<kHeads, 2>(p, p_stride, blocks, nb, b, n_rows, d, out);
    }
  }
  for (; b < nb; ++b) WeightedSumBlocksQ8_0<kHeads, 1>(p, p_stride, blocks, nb, b, n_rows, d, out);
}

using WeightedSumHeadsFn = void (*)(const float* p, int64_t p_stride, const BlockQ8_0* blocks,
                                    int64_t nb, int64_t n_rows, int64_t d, float* out);
// By number of heads, 1 to 8.
constexpr WeightedSumHeadsFn kWeightedSumHeadsQ8_0[] = {
    WeightedSumHeadsQ8_0<1>, WeightedSumHeadsQ8_0<2>, WeightedSumHeadsQ8_0<3>,
    WeightedSumHeadsQ8_0<4>, WeightedSumHeadsQ8_0<5>, WeightedSumHeadsQ8_0<6>,
    WeightedSumHeadsQ8_0<7>, WeightedSumHeadsQ8_0<8>};

}  // namespace

// A GQA group of 8 heads takes one pass over the rows per block instead of
// reloading every head's output for every row (the AVX2 kernel's way).
void WeightedSumRowsQ8_0(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                         int64_t n_rows, int64_t d, float* out) {
  const auto* blocks = static_cast<const BlockQ8_0*>(rows);
  const int64_t nb = d / 32;
  for (int64_t h0 = 0; h0 < n_q; h0 += 8) {
    const float* ph = p + h0 * p_stride;
    float* oh = out + h0 * d;
    kWeightedSumHeadsQ8_0[(n_q - h0 < 8 ? n_q - h0 : 8) - 1](ph, p_stride, blocks, nb, n_rows, d,
                                                             oh);
  }
}

}  // namespace h2o::kernels::avx512

namespace h2o::kernels {

const KernelTable& Avx512Kernels() {
  // The AVX2 table with the entries that 512-bit registers speed up
  // replaced; everything else (the integer dots and every quantized type
  // beyond q8_0/q4_0, RoPE, GEMM, attention rows) is the AVX2 code.
  static const KernelTable kAvx512 = [] {
    KernelTable t = Avx2Kernels();
    t.name = "avx512";
    t.f32 = {ref::QuantizeRowF32, ref::DequantizeRowF32, avx512::DotRowF32};
    t.f16 = {avx2::QuantizeRowF16, avx512::DequantizeRowF16, avx512::DotRowF16};
    t.bf16 = {ref::QuantizeRowBF16, avx512::DequantizeRowBF16, avx512::DotRowBF16};
    t.q8_0.dequantize_row = avx512::DequantizeRowQ8_0;
    t.q8_0.dot_row = avx512::DotRowQ8_0;
    t.q4_0.dequantize_row = avx512::DequantizeRowQ4_0;
    t.q4_0.dot_row = avx512::DotRowQ4_0;
    t.rms_norm = avx512::RmsNorm;
    t.softmax = avx512::SoftmaxInPlace;
    t.swiglu = avx512::SwiGluInPlace;
    t.axpy = avx512::Axpy;
    avx512::SetGemmTiles(t);
    t.kv_derived = DeriveKvRowKernels<Avx512Kernels>();
    t.kv_derived.q8_0.weighted_sum_rows = avx512::WeightedSumRowsQ8_0;
    return t;
  }();
  return kAvx512;
}

}  // namespace h2o::kernels
