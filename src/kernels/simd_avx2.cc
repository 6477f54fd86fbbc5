// AVX2 + FMA + F16C backend: 8 floats per register.
//
// This file is compiled with -mavx2 -mfma -mf16c and runs only after
// CpuHasAvx2(). To keep AVX2 code from leaking into callers that run on
// any CPU, it defines only internal-linkage helpers and its own namespace's
// functions, and odr-uses no inline function or template from a header
// (no std::min, no fp16.h): a non-inlined copy of such a function would be
// an AVX2 build of a symbol the linker may pick for every caller.
// -ffp-contract=off keeps the compiler from fusing multiplies and adds that
// are written apart (the RoPE rotation is bit-identical to the reference).
//
// Invariants: every loop handles the last n % 8 elements with masked
// loads/stores (or a zero-padded copy for 16-bit types), so pointers need
// no alignment and reads never pass the end of an array. Dot products keep
// several independent accumulators; the quantized ones convert int8 -> f32
// in registers, multiply with x, and scale the block sum by d once.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2_common.h"
#include "kernels/dispatch.h"
#include "kernels/kv_rows_block.h"
#include "kernels/prefetch.h"
#include "kernels/quant.h"
#include "kernels/ref.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

constexpr int64_t kWidth = 8;

__m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
__m256 LoadBF16(const uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
// n < 8 halves through a zero-padded copy (no masked 16-bit loads in AVX2).
template <typename Load>
__m256 Load16Tail(Load load, const uint16_t* p, int64_t n) {
  uint16_t buf[kWidth] = {};
  std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(uint16_t));
  return load(buf);
}

// 8 int8 -> 8 floats.
__m256 Int8x8ToFloat(__m128i q) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)); }
__m256 LoadQ8x8(const int8_t* q) {
  return Int8x8ToFloat(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
}

// sum_i w[i] x[i] where load(i) gives w[i, i+8) and load_tail(i, m) the
// last m < 8 of them zero-padded; w, of Element type, is only prefetched.
template <typename Element, typename Load, typename LoadTailFn>
float DotFloats(const Element* w, Load load, LoadTailFn load_tail, const float* x, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps();
  __m256 acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 4 * kWidth <= n; i += 4 * kWidth) {
    PrefetchAhead(w + i, 4 * kWidth * sizeof(Element));
    acc0 = _mm256_fmadd_ps(load(i), _mm256_loadu_ps(x + i), acc0);
    acc1 = _mm256_fmadd_ps(load(i + 8), _mm256_loadu_ps(x + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(load(i + 16), _mm256_loadu_ps(x + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(load(i + 24), _mm256_loadu_ps(x + i + 24), acc3);
  }
  for (; i + kWidth <= n; i += kWidth) {
    acc0 = _mm256_fmadd_ps(load(i), _mm256_loadu_ps(x + i), acc0);
  }
  if (i < n) acc1 = _mm256_fmadd_ps(load_tail(i, n - i), LoadTail(x + i, n - i), acc1);
  return HorizontalSum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
}

// Block sum of one Q8_0 block with x[0, 32), not yet scaled by d.
__m256 BlockSumQ8_0(const BlockQ8_0& block, const float* x) {
  const int8_t* q = block.qs;
  __m256 s0 = _mm256_mul_ps(LoadQ8x8(q), _mm256_loadu_ps(x));
  __m256 s1 = _mm256_mul_ps(LoadQ8x8(q + 8), _mm256_loadu_ps(x + 8));
  s0 = _mm256_fmadd_ps(LoadQ8x8(q + 16), _mm256_loadu_ps(x + 16), s0);
  s1 = _mm256_fmadd_ps(LoadQ8x8(q + 24), _mm256_loadu_ps(x + 24), s1);
  return _mm256_add_ps(s0, s1);
}

// The 32 values q - 8 of a Q4_0 block as four groups of 8 floats, in
// element order: low nibbles are elements 0..15, high nibbles 16..31.
struct Q4Floats {
  __m256 v[4];
};
Q4Floats UnpackQ4_0(const BlockQ4_0& block) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.qs));
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, nibble), eight);
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), nibble), eight);
  return {{Int8x8ToFloat(lo), Int8x8ToFloat(_mm_unpackhi_epi64(lo, lo)), Int8x8ToFloat(hi),
           Int8x8ToFloat(_mm_unpackhi_epi64(hi, hi))}};
}

__m256 BlockSumQ4_0(const BlockQ4_0& block, const float* x) {
  const Q4Floats w = UnpackQ4_0(block);
  __m256 s0 = _mm256_mul_ps(w.v[0], _mm256_loadu_ps(x));
  __m256 s1 = _mm256_mul_ps(w.v[1], _mm256_loadu_ps(x + 8));
  s0 = _mm256_fmadd_ps(w.v[2], _mm256_loadu_ps(x + 16), s0);
  s1 = _mm256_fmadd_ps(w.v[3], _mm256_loadu_ps(x + 24), s1);
  return _mm256_add_ps(s0, s1);
}

// sum over blocks of d_b * BlockSum(b); two accumulators on alternate
// blocks so consecutive blocks do not wait on each other.
template <typename Block, typename BlockSum>
float DotBlocks(const void* row, const float* x, int64_t n, BlockSum block_sum) {
  const auto* blocks = static_cast<const Block*>(row);
  const int64_t n_blocks = n / 32;
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(HalfToFloat(blocks[b].d)),
                           block_sum(blocks[b], x + b * 32), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(HalfToFloat(blocks[b + 1].d)),
                           block_sum(blocks[b + 1], x + (b + 1) * 32), acc1);
  }
  if (b < n_blocks) {
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(HalfToFloat(blocks[b].d)),
                           block_sum(blocks[b], x + b * 32), acc0);
  }
  return HorizontalSum(_mm256_add_ps(acc0, acc1));
}

// 32 signed bytes w times 32 signed bytes x, summed in groups of four
// (8 int32 lanes). maddubs multiplies unsigned by signed bytes, so w's sign
// moves onto x: |w| * (x * sign(w)); the int16 pair sums stay within
// 2 * 128 * 127 < 2^15 since no quantizer emits -128 for x.
__m256i DotI8x32(__m256i w, __m256i x) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// Q4_0 codes q (0..15, unsigned) times x, minus 8 * sum(x) spread over the
// 8 lanes: sum_i (q_i - 8) x_i exactly, with no sign fix-up needed since q
// is already the unsigned operand of maddubs (pair sums <= 2 * 15 * 127).
__m256i DotQ4x32(const BlockQ4_0& block, const BlockQ8Act& x) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.qs));
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(raw, nibble);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), nibble);
  const __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
  const __m256i lanes = _mm256_madd_epi16(_mm256_maddubs_epi16(q, xq), _mm256_set1_epi16(1));
  return _mm256_sub_epi32(lanes, _mm256_set1_epi32(x.sum));
}

__m256i DotQ8x32(const BlockQ8_0& block, const BlockQ8Act& x) {
  return DotI8x32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block.qs)),
                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
}

// Four floats widened to doubles.
__m256d Widen(__m128 v) { return _mm256_cvtps_pd(v); }

// The 8 int32 lanes of each of v[0..7] summed, v[j]'s sum in lane j
// (integer adds: exact in any order).
__m256i SumLanes8(const __m256i v[8]) {
  const __m256i s0 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i s1 =
      _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(s0, s1, 0x20),
                          _mm256_permute2x128_si256(s0, s1, 0x31));
}

}  // namespace

void ExpRow(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) _mm256_storeu_ps(y + i, Exp(_mm256_loadu_ps(x + i)));
  if (i < n) StoreTail(y + i, Exp(LoadTail(x + i, n - i)), n - i);
}

// --- Row kernels ---

float DotRowF32(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const float*>(row);
  return DotFloats(
      w, [w](int64_t i) { return _mm256_loadu_ps(w + i); },
      [w](int64_t i, int64_t m) { return LoadTail(w + i, m); }, x, n);
}

float DotRowF16(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const uint16_t*>(row);
  return DotFloats(
      w, [w](int64_t i) { return LoadF16(w + i); },
      [w](int64_t i, int64_t m) { return Load16Tail(LoadF16, w + i, m); }, x, n);
}

float DotRowBF16(const void* row, const float* x, int64_t n) {
  const auto* w = static_cast<const uint16_t*>(row);
  return DotFloats(
      w, [w](int64_t i) { return LoadBF16(w + i); },
      [w](int64_t i, int64_t m) { return Load16Tail(LoadBF16, w + i, m); }, x, n);
}

float DotRowQ8_0(const void* row, const float* x, int64_t n) {
  return DotBlocks<BlockQ8_0>(row, x, n, BlockSumQ8_0);
}

float DotRowQ4_0(const void* row, const float* x, int64_t n) {
  return DotBlocks<BlockQ4_0>(row, x, n, BlockSumQ4_0);
}

// Same arithmetic as the reference: d = amax / 127, id = 1 / d (0 when d
// is 0), q = round-to-nearest-even(x * id), so the blocks are identical.
void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    const float d = AbsMax32(x) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = d;
    const Codes32 c = RoundToCodes(x, id);
    StoreCodes(c, dst[b].qs);
    // |code| <= 127, so the int32 sums cannot overflow.
    dst[b].sum = HorizontalSum(
        _mm256_add_epi32(_mm256_add_epi32(c.v[0], c.v[1]), _mm256_add_epi32(c.v[2], c.v[3])));
  }
}

float DotRowQ8Q8_0(const void* row, const BlockQ8Act* x, int64_t n) {
  // Lambdas, not function pointers: GCC does not inline a pointer passed
  // through the helper's own lambda.
  return DotBlocksQ8<BlockQ8_0, false>(
      row, x, n, [](const BlockQ8_0& b, const BlockQ8Act& xb) { return DotQ8x32(b, xb); });
}

// DotRowQ8Q8_0 of eight rows at a time, bit for bit: their blocks' int32
// sums reduced together (row j in lane j) and each row's float terms
// formed and added in block order in its own lane, as the row dot adds
// them; no horizontal float sum per row.
void DotRowsQ8Q8_0(const void* rows, size_t row_bytes, int64_t n_rows, const BlockQ8Act* x,
                   int64_t n, float* y) {
  const auto* base = static_cast<const uint8_t*>(rows);
  const int64_t n_blocks = n / 32;
  int64_t r = 0;
  for (; r + 8 <= n_rows; r += 8) {
    const BlockQ8_0* row[8];
    for (int j = 0; j < 8; ++j) {
      row[j] = reinterpret_cast<const BlockQ8_0*>(base + (r + j) * row_bytes);
    }
    PrefetchAhead(row[0], 8 * static_cast<int64_t>(row_bytes), kKvRowPrefetchBytes);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n_blocks; ++b) {
      __m256i sums[8];
      for (int j = 0; j < 8; ++j) sums[j] = DotQ8x32(row[j][b], x[b]);
      const __m256 d_w = _mm256_cvtph_ps(
          _mm_setr_epi16(static_cast<int16_t>(row[0][b].d), static_cast<int16_t>(row[1][b].d),
                         static_cast<int16_t>(row[2][b].d), static_cast<int16_t>(row[3][b].d),
                         static_cast<int16_t>(row[4][b].d), static_cast<int16_t>(row[5][b].d),
                         static_cast<int16_t>(row[6][b].d), static_cast<int16_t>(row[7][b].d)));
      const __m256 term = _mm256_mul_ps(_mm256_mul_ps(d_w, _mm256_set1_ps(x[b].d)),
                                        _mm256_cvtepi32_ps(SumLanes8(sums)));
      acc = _mm256_add_ps(acc, term);
    }
    _mm256_storeu_ps(y + r, acc);
  }
  for (; r < n_rows; ++r) y[r] = DotRowQ8Q8_0(base + r * row_bytes, x, n);
}

float DotRowQ8Q4_0(const void* row, const BlockQ8Act* x, int64_t n) {
  return DotBlocksQ8<BlockQ4_0, false>(
      row, x, n, [](const BlockQ4_0& b, const BlockQ8Act& xb) { return DotQ4x32(b, xb); });
}

// vcvtps2ph rounds to nearest even as F32ToF16 does, NaNs included (quiet
// bit set, the payload's top bits kept). MXCSR's FTZ does not touch its
// results, and DAZ only zeroes float denormals, which round to a signed
// zero half either way; so it equals the reference bit for bit.
void QuantizeRowF16(const float* src, void* dst, int64_t n) {
  auto* out = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  }
  if (i < n) {
    float tail[kWidth] = {};
    uint16_t halves[kWidth];
    std::memcpy(tail, src + i, static_cast<size_t>(n - i) * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(halves),
                     _mm256_cvtps_ph(_mm256_loadu_ps(tail), _MM_FROUND_TO_NEAREST_INT));
    std::memcpy(out + i, halves, static_cast<size_t>(n - i) * sizeof(uint16_t));
  }
}

void DequantizeRowF16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) _mm256_storeu_ps(dst + i, LoadF16(in + i));
  if (i < n) StoreTail(dst + i, Load16Tail(LoadF16, in + i, n - i), n - i);
}

void DequantizeRowBF16(const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint16_t*>(src);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) _mm256_storeu_ps(dst + i, LoadBF16(in + i));
  if (i < n) StoreTail(dst + i, Load16Tail(LoadBF16, in + i, n - i), n - i);
}

void DequantizeRowQ8_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ8_0*>(src);
  for (int64_t b = 0; b < n / 32; ++b, dst += 32) {
    const __m256 d = _mm256_set1_ps(HalfToFloat(blocks[b].d));
    for (int j = 0; j < 32; j += kWidth) {
      _mm256_storeu_ps(dst + j, _mm256_mul_ps(d, LoadQ8x8(blocks[b].qs + j)));
    }
  }
}

void DequantizeRowQ4_0(const void* src, float* dst, int64_t n) {
  const auto* blocks = static_cast<const BlockQ4_0*>(src);
  for (int64_t b = 0; b < n / 32; ++b, dst += 32) {
    const __m256 d = _mm256_set1_ps(HalfToFloat(blocks[b].d));
    const Q4Floats w = UnpackQ4_0(blocks[b]);
    for (int k = 0; k < 4; ++k) _mm256_storeu_ps(dst + k * kWidth, _mm256_mul_ps(d, w.v[k]));
  }
}

// --- Vector operations ---

// Max, then exp(x - max) stored and summed in double (as the reference),
// then one multiply by the float reciprocal.
void SoftmaxInPlace(float* x, int64_t n) {
  const __m256 neg_inf = _mm256_set1_ps(-__builtin_inff());
  __m256 vmax = neg_inf;
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 v =
        _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(x + i, mask), _mm256_castsi256_ps(mask));
    vmax = _mm256_max_ps(vmax, v);
  }
  const __m256 max = _mm256_set1_ps(HorizontalMax(vmax));
  __m256d sum0 = _mm256_setzero_pd();
  __m256d sum1 = _mm256_setzero_pd();
  for (i = 0; i + kWidth <= n; i += kWidth) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), max));
    _mm256_storeu_ps(x + i, e);
    sum0 = _mm256_add_pd(sum0, Widen(_mm256_castps256_ps128(e)));
    sum1 = _mm256_add_pd(sum1, Widen(_mm256_extractf128_ps(e, 1)));
  }
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    // Lanes past the end read as 0, whose exp(0 - max) may be huge: zero them.
    const __m256 e = _mm256_and_ps(Exp(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), max)),
                                   _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(x + i, mask, e);
    sum0 = _mm256_add_pd(sum0, Widen(_mm256_castps256_ps128(e)));
    sum1 = _mm256_add_pd(sum1, Widen(_mm256_extractf128_ps(e, 1)));
  }
  const __m256 inv =
      _mm256_set1_ps(static_cast<float>(1.0 / HorizontalSum(_mm256_add_pd(sum0, sum1))));
  for (i = 0; i + kWidth <= n; i += kWidth) {
    _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  }
  if (i < n) StoreTail(x + i, _mm256_mul_ps(LoadTail(x + i, n - i), inv), n - i);
}

namespace {
__m256 SwiGlu(__m256 g, __m256 up) {
  const __m256 e = Exp(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));  // exp(-g)
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), up);
}
}  // namespace

void SwiGluInPlace(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    _mm256_storeu_ps(gate + i, SwiGlu(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < n) StoreTail(gate + i, SwiGlu(LoadTail(gate + i, n - i), LoadTail(up + i, n - i)), n - i);
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  if (i < n)
    StoreTail(y + i, _mm256_fmadd_ps(va, LoadTail(x + i, n - i), LoadTail(y + i, n - i)), n - i);
}

}  // namespace h2o::kernels::avx2

namespace h2o::kernels {

// q8_0's own weighted sums in place of the derived ones (its scores are
// the derived integer GEMM's).
static DerivedKvRowKernels WithQ8_0KvRows(DerivedKvRowKernels k) {
  k.q8_0.weighted_sum_rows = avx2::WeightedSumRowsQ8_0;
  return k;
}

const KernelTable& Avx2Kernels() {
  // Quantization runs once per weight at conversion time: the reference's.
  // The quantized types' entries come from their own files, so the table is
  // built at first use rather than at compile time.
  static const KernelTable kAvx2 = avx2::WithGemmTiles({
      .name = "avx2",
      .f32 = {ref::QuantizeRowF32, ref::DequantizeRowF32, avx2::DotRowF32},
      .f16 = {avx2::QuantizeRowF16, avx2::DequantizeRowF16, avx2::DotRowF16},
      .bf16 = {ref::QuantizeRowBF16, avx2::DequantizeRowBF16, avx2::DotRowBF16},
      .q8_0 = {.quantize_row = ref::QuantizeRowQ8_0,
               .dequantize_row = avx2::DequantizeRowQ8_0,
               .dot_row = avx2::DotRowQ8_0,
               .dot_row_q8 = avx2::DotRowQ8Q8_0,
               .dot_rows_q8 = avx2::DotRowsQ8Q8_0},
      .q4_0 = {ref::QuantizeRowQ4_0, avx2::DequantizeRowQ4_0, avx2::DotRowQ4_0, avx2::DotRowQ8Q4_0},
      .q4_1 = avx2::Q4_1Kernels(),
      .q5_0 = avx2::Q5_0Kernels(),
      .q5_1 = avx2::Q5_1Kernels(),
      .q2_k = avx2::Q2_KKernels(),
      .q3_k = avx2::Q3_KKernels(),
      .q4_k = avx2::Q4_KKernels(),
      .q5_k = avx2::Q5_KKernels(),
      .q6_k = avx2::Q6_KKernels(),
      .rms_norm = avx2::RmsNorm,
      .layer_norm = avx2::LayerNorm,
      .rope = avx2::RopeInPlace,
      .softmax = avx2::SoftmaxInPlace,
      .swiglu = avx2::SwiGluInPlace,
      .geglu = avx2::GeGluInPlace,
      .gelu = avx2::GeluInPlace,
      .softcap = avx2::SoftcapInPlace,
      .axpy = avx2::Axpy,
      .gemm_f32 = avx2::GemmF32,
      .quantize_act = avx2::QuantizeActivation,
      .quantize_act_k = avx2::QuantizeActivationK,
      .kv_f32 = {avx2::ScoreRowsF32, avx2::WeightedSumRowsF32},
      .kv_f16 = {avx2::ScoreRowsF16, avx2::WeightedSumRowsF16},
      .kv_derived = WithQ8_0KvRows(DeriveKvRowKernels<Avx2Kernels>()),
  });
  return kAvx2;
}

}  // namespace h2o::kernels
