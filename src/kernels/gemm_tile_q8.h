// The GemmFn of the 32-element quantized types (q8_0, q4_0, q4_1, q5_0,
// q5_1) on a backend S with a vpdpbusd (unsigned bytes times signed bytes,
// four products summed into each int32 lane; on AVX2 made of maddubs),
// written once for the x86 files that include it (gemm_q8_avxvnni.cc,
// gemm_q8_avx512.cc, gemm_q8_avx2.cc; gemm_kquant_avx2.cc takes its
// transpose); internal linkage, as their rules ask.
//
// Rows lie along the vector lanes: a panel of kPanelRows rows is repacked
// so that one vector holds four consecutive codes of S::kRows rows
// (unsigned, code + offset), and the activation's four codes are broadcast
// to every lane. So each weight vector serves RN tokens and each broadcast
// RV row vectors, and a block's int32 sums come out one lane per row, ready
// for the per-block float step without a horizontal sum. The repack
// happens per call (Q8Tile), or once at load for q8_0, whose panels take
// exactly the bytes of its rows, and q4_0 kept in nibbles (Q4_0Nibbles)
// likewise (Q8PackPanels and Q8TilePanels, the table's pack_panels and
// gemm_panels).
//
// Order of operations: per block the exact integer sum, then the
// reference's float expression (ref_quant.cc, ref_quant_ext.cc) lane by
// lane: sum += (d_w * d_x) * isum, or sum += (d_w * d_x) * isum - (dmin_w *
// d_x) * xsum with dmin_w = -m for the types with a min; blocks in order,
// no FMA. The AVX2 row dots do the same, so MatMul equals MatVec, and
// every backend the reference, bit for bit.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/quant.h"

namespace h2o::kernels {
namespace {

// Per type: its block, code offset (code - kOffset is the signed code the
// reference multiplies), whether it has a min, and Codes(block): the 32
// unsigned codes in element order. A panel stores them as kStoredGroups
// groups of four bytes per row; Group<S>(at, g, stride) gives group g
// (codes 4g..4g+3) of S::kRows rows from the stored groups at `at`, stride
// bytes apart.
struct ByteGroups {
  static constexpr int kStoredGroups = 8;
  static constexpr bool kFifthBits = false;  // a panel stores each row's qh after its codes
  // Codes stored signed (kOffset 0) and multiplied by S::DotSigned instead
  // of S::Dpbusd: for a backend whose unsigned-by-signed dot would
  // saturate on q8_0's codes + 128 (AVX2's maddubs).
  static constexpr bool kSignedCodes = false;
  template <typename S>
  static typename S::I Group(const uint8_t* at, int g, size_t stride) {
    return S::LoadI(at + g * stride);
  }
};

struct Q8_0Codes : ByteGroups {
  using Block = BlockQ8_0;
  static constexpr int kOffset = 128;
  static constexpr bool kHasMin = false;
  static __m256i Codes(const Block& b) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)),
                            _mm256_set1_epi8(static_cast<char>(0x80)));
  }
};

// q8_0 as stored, for S::DotSigned.
struct Q8_0SignedCodes : ByteGroups {
  using Block = BlockQ8_0;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = false;
  static constexpr bool kSignedCodes = true;
  static __m256i Codes(const Block& b) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
  }
};

// Low nibbles are elements 0..15, high nibbles 16..31.
[[maybe_unused]] __m256i Nibbles(const uint8_t (&qs)[16]) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i nibble = _mm_set1_epi8(0x0F);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(raw, nibble)),
                                 _mm_and_si128(_mm_srli_epi16(raw, 4), nibble), 1);
}

// 0x10 in byte j where bit j of qh (little-endian) is set.
[[maybe_unused]] __m256i FifthBits(const uint8_t (&qh)[4]) {
  uint32_t bits = 0;
  std::memcpy(&bits, qh, sizeof(bits));
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                           2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(0x10));
}

struct Q4_0Codes : ByteGroups {
  using Block = BlockQ4_0;
  static constexpr int kOffset = 8;
  static constexpr bool kHasMin = false;
  static __m256i Codes(const Block& b) { return Nibbles(b.qs); }
};
struct Q4_1Codes : ByteGroups {
  using Block = BlockQ4_1;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
  static __m256i Codes(const Block& b) { return Nibbles(b.qs); }
};
struct Q5_0Codes : ByteGroups {
  using Block = BlockQ5_0;
  static constexpr int kOffset = 16;
  static constexpr bool kHasMin = false;
  static __m256i Codes(const Block& b) { return _mm256_or_si256(Nibbles(b.qs), FifthBits(b.qh)); }
};
struct Q5_1Codes : ByteGroups {
  using Block = BlockQ5_1;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMin = true;
  static __m256i Codes(const Block& b) { return _mm256_or_si256(Nibbles(b.qs), FifthBits(b.qh)); }
};

// A 4-bit type kept in nibbles, for panels packed once: the file's bytes
// qs[4g..4g + 3] stored as group g < 4, whose low nibbles are codes
// 4g..4g+3 and high nibbles codes 16 + 4g.. (GGML's order), so a panel
// block takes exactly the bytes of the rows' blocks. Block, offset and min
// are those of Codes; Codes() is never called: PackPanel copies the bytes
// as they are. Widened: the layout WidenNibbles makes of it.
template <typename Codes>
struct NibblesOf : Codes {
  using Widened = Codes;
  static constexpr int kStoredGroups = 4;
  template <typename S>
  static typename S::I Group(const uint8_t* at, int g, size_t stride) {
    return g < 4 ? S::Low4(S::LoadI(at + g * stride)) : S::High4(S::LoadI(at + (g - 4) * stride));
  }
};
struct Q4_0Nibbles : NibblesOf<Q4_0Codes> {};
// q4_1 likewise, its min beside its scale.
struct Q4_1Nibbles : NibblesOf<Q4_1Codes> {};

// 0x10 in byte j of each dword where bit 4g + j of the dword of `qh` is
// set: the fifth bits of codes 4g..4g+3 of eight rows (one qh dword each).
[[maybe_unused]] __m256i FifthBitsOfGroup(__m256i qh, int g) {
  // Each dword's byte g / 2 into all four of its bytes (pshufb works per
  // 128-bit lane, so the index names the dword's own bytes).
  const __m256i index =
      _mm256_add_epi8(_mm256_set1_epi8(static_cast<char>(g / 2)),
                      _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12, 0, 0, 0,
                                       0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12));
  const __m256i bit = _mm256_set1_epi32(static_cast<int>(0x08040201u << (4 * (g % 2))));
  const __m256i spread = _mm256_shuffle_epi8(qh, index);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(0x10));
}

// q5_0 and q5_1 in panels, for the 256-bit backends (eight rows a vector):
// the nibbles as NibblesOf stores them, then each row's qh as in the file,
// whose bits are OR'ed in as 0x10 per code when a group is read.
template <typename Codes>
struct Nibbles5Of : NibblesOf<Codes> {
  static constexpr bool kFifthBits = true;
  template <typename S>
  static typename S::I Group(const uint8_t* at, int g, size_t stride) {
    static_assert(S::kRows == 8, "qh dwords of eight rows a vector");
    return _mm256_or_si256(NibblesOf<Codes>::template Group<S>(at, g, stride),
                           FifthBitsOfGroup(S::LoadI(at + 4 * stride), g));
  }
};
struct Q5_0Nibbles : Nibbles5Of<Q5_0Codes> {};
struct Q5_1Nibbles : Nibbles5Of<Q5_1Codes> {};

// Where a panel block's qh dwords start (kinds with kFifthBits: right
// after the four nibble groups, which is where Nibbles5Of::Group reads
// them, 4 * stride past group 0), and where its scales start (after the
// code groups and any qh).
template <int kRows>
inline constexpr size_t kQhAt = 16 * kRows;
// clang-format off
template <typename Kind, int kRows>
inline constexpr size_t kScalesAt =
    kRows * (4 * Kind::kStoredGroups + (Kind::kFifthBits ? 4 : 0));
// clang-format on

// A panel of kRows rows is its blocks one after another; block b holds
// codes[g][row][4] (group g of each row's block b, so one vector load
// gives a group for S::kRows rows), then d[row] and (types with a min)
// dmin[row] = -m, as halves. Rows past the matrix are zero (their lanes
// compute zeros that are never stored). Block-major, so a sweep streams
// the panel front to back, and for q8_0 a block of the panel is exactly
// the bytes of the kRows rows' blocks it came from.
// (clang-format reads kRows * (...) below as a pointer declaration.)
// clang-format off
template <typename Kind, int kRows>
inline constexpr size_t kPanelBlockBytes =
    kScalesAt<Kind, kRows> + kRows * (Kind::kHasMin ? 4 : 2);
// clang-format on

template <typename Kind, int kRows>
size_t PanelBytes(int64_t n_blocks) {
  return static_cast<size_t>(n_blocks) * kPanelBlockBytes<Kind, kRows>;
}

// Eight rows' blocks b (codes u[0..7], 32 bytes each) to their place: an
// 8 x 8 transpose of dwords, row i's group g landing at out[g * stride +
// 4 i].
[[maybe_unused]] void StoreTransposed8(const __m256i (&u)[8], uint8_t* out, size_t stride) {
  __m256i t[8], v[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(u[i], u[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(u[i], u[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    v[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    v[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    v[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    v[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  // v[j] (j < 4) holds groups j and j + 4 of rows 0-3, v[j + 4] of rows 4-7.
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * stride),
                        _mm256_permute2x128_si256(v[j], v[j + 4], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (j + 4) * stride),
                        _mm256_permute2x128_si256(v[j], v[j + 4], 0x31));
  }
}

// The n_rows (<= kRows) rows at w, row_bytes apart, as one panel at out.
template <typename Kind, int kRows>
void PackPanel(const uint8_t* w, size_t row_bytes, int64_t n_rows, int64_t n_blocks, uint8_t* out) {
  using Block = typename Kind::Block;
  constexpr size_t kGroupStride = 4 * kRows;
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* codes = out + b * kPanelBlockBytes<Kind, kRows>;
    auto* d = reinterpret_cast<uint16_t*>(codes + kScalesAt<Kind, kRows>);
    if constexpr (Kind::kStoredGroups == 4) {
      // Nibbles, once at load: the bytes as they are, a group at a time.
      for (int64_t r = 0; r < kRows; ++r) {
        const Block* block =
            r < n_rows ? reinterpret_cast<const Block*>(w + r * row_bytes) + b : nullptr;
        for (int g = 0; g < 4; ++g) {
          uint8_t* to = codes + (g * kRows + r) * 4;
          if (block != nullptr) {
            std::memcpy(to, block->qs + 4 * g, 4);
          } else {
            std::memset(to, 0, 4);
          }
        }
        if constexpr (Kind::kFifthBits) {
          uint8_t* qh = codes + kQhAt<kRows> + 4 * r;
          if (block != nullptr) {
            std::memcpy(qh, block->qh, 4);
          } else {
            std::memset(qh, 0, 4);
          }
        }
        d[r] = block != nullptr ? block->d : 0;
        if constexpr (Kind::kHasMin) {
          d[kRows + r] = block != nullptr ? static_cast<uint16_t>(block->m ^ 0x8000u) : 0;
        }
      }
    } else {
      for (int unit = 0; unit < kRows; unit += 8) {
        __m256i u[8];
        for (int i = 0; i < 8; ++i) {
          const int64_t r = unit + i;
          if (r < n_rows) {
            const Block& block = reinterpret_cast<const Block*>(w + r * row_bytes)[b];
            u[i] = Kind::Codes(block);
            d[r] = block.d;
            // Flipping the sign bit negates a half exactly.
            if constexpr (Kind::kHasMin) d[kRows + r] = static_cast<uint16_t>(block.m ^ 0x8000u);
          } else {
            u[i] = _mm256_setzero_si256();
            d[r] = 0;
            if constexpr (Kind::kHasMin) d[kRows + r] = 0;
          }
        }
        StoreTransposed8(u, codes + 4 * unit, kGroupStride);
      }
    }
  }
}

// The S of the 256-bit backends (AVX-VNNI, AVX2) but for their integer
// dot: eight rows per register, one row vector by five tokens (5 + 5
// accumulators and the operands fit in 16 registers).
struct Ymm8Rows {
  using I = __m256i;
  using F = __m256;
  static constexpr int kRows = 8;
  static constexpr int kPanelRows = 8;
  static constexpr int kRN = 5;
  static I ZeroI() { return _mm256_setzero_si256(); }
  static I Broadcast(int32_t v) { return _mm256_set1_epi32(v); }
  static I LoadI(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const I*>(p)); }
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

// Cache lines to hint while a micro-kernel runs: n_lines from `at`,
// per_block of them before each block.
struct Hints {
  const char* at;
  int64_t n_lines;
  int per_block;
};

// y[t * ldy + r] for the RV * S::kRows = kRows rows of a panel (n_valid of
// them stored) and RN tokens. Beyond the codes and d, a token's block gives
// -kOffset * sum, the int32 its lanes start from (so the offset cancels),
// and float(sum) for the min term: derived here from the block being read
// rather than once per call into a side array, as a batched decode step
// calls this on many small chunks.
template <typename S, typename Kind, int kRows, int RV, int RN>
void Q8Micro(const uint8_t* panel, int n_valid, const BlockQ8Act* x, int64_t n_blocks, float* y,
             int64_t ldy, const Hints& hints) {
  using I = typename S::I;
  using F = typename S::F;
  constexpr int P = S::kRows;
  F acc[RV][RN];
  for (int v = 0; v < RV; ++v) {
    for (int t = 0; t < RN; ++t) acc[v][t] = S::ZeroF();
  }
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (int k = 0; k < hints.per_block; ++k) {
      const int64_t line = b * hints.per_block + k;
      if (line < hints.n_lines) _mm_prefetch(hints.at + line * 64, _MM_HINT_T0);
    }
    I isum[RV][RN];
    for (int t = 0; t < RN; ++t) {
      const I start =
          Kind::kOffset != 0 ? S::Broadcast(-Kind::kOffset * x[t * n_blocks + b].sum) : S::ZeroI();
      for (int v = 0; v < RV; ++v) isum[v][t] = start;
    }
    const uint8_t* codes = panel + b * kPanelBlockBytes<Kind, kRows>;
    const auto* scales = reinterpret_cast<const uint16_t*>(codes + kScalesAt<Kind, kRows>);
    for (int g = 0; g < 8; ++g) {
      I wv[RV];
      for (int v = 0; v < RV; ++v) {
        wv[v] = Kind::template Group<S>(codes + v * P * 4, g, 4 * kRows);
      }
      for (int t = 0; t < RN; ++t) {
        int32_t four;
        std::memcpy(&four, x[t * n_blocks + b].qs + 4 * g, sizeof(four));
        const I xv = S::Broadcast(four);
        for (int v = 0; v < RV; ++v) {
          if constexpr (Kind::kSignedCodes) {
            isum[v][t] = S::DotSigned(isum[v][t], wv[v], xv);
          } else {
            isum[v][t] = S::Dpbusd(isum[v][t], wv[v], xv);
          }
        }
      }
    }
    for (int v = 0; v < RV; ++v) {
      const F dw = S::LoadHalves(scales + v * P);
      F dmin = S::ZeroF();
      if constexpr (Kind::kHasMin) dmin = S::LoadHalves(scales + kRows + v * P);
      for (int t = 0; t < RN; ++t) {
        const F dx = S::Broadcast(x[t * n_blocks + b].d);
        F term = S::Mul(S::Mul(dw, dx), S::Cvt(isum[v][t]));
        if constexpr (Kind::kHasMin) {
          const F xsum = S::Broadcast(static_cast<float>(x[t * n_blocks + b].sum));
          term = S::Sub(term, S::Mul(S::Mul(dmin, dx), xsum));
        }
        acc[v][t] = S::Add(acc[v][t], term);
      }
    }
  }
  for (int t = 0; t < RN; ++t) {
    for (int v = 0; v < RV; ++v) {
      const int n = n_valid - v * P;
      if (n > 0) S::Store(y + t * ldy + v * P, acc[v][t], n < P ? n : P);
    }
  }
}

template <typename S, typename Kind, int kRows>
using Q8MicroFn = void (*)(const uint8_t*, int, const BlockQ8Act*, int64_t, float*, int64_t,
                           const Hints&);

// The token tails: Q8Micro with 1..S::kRN tokens.
template <typename S, typename Kind, int kRows, int RV>
struct Q8Kernels {
  template <int... rn>
  static constexpr void Fill(Q8MicroFn<S, Kind, kRows>* out, std::integer_sequence<int, rn...>) {
    ((out[rn] = &Q8Micro<S, Kind, kRows, RV, rn + 1>), ...);
  }
  Q8MicroFn<S, Kind, kRows> fn[S::kRN] = {};
  constexpr Q8Kernels() { Fill(fn, std::make_integer_sequence<int, S::kRN>()); }
};

uint8_t* Align64(void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<uint8_t*>((address + 63) / 64 * 64);
}

// All tokens over one packed panel, S::kRN at a time (RV = kPanelRows /
// S::kRows row vectors per step; a panel's last vector may be partly past
// the matrix). The bytes at `next` (the next panel's source) are hinted
// into the cache a few lines per block while this panel's tokens run: with
// few tokens (batched decode) the next panel would otherwise wait on DRAM
// with nothing to overlap it. A burst of hints would stall on the
// line-fill buffers instead.
template <typename S, typename Kind>
void SweepPanel(const uint8_t* panel, int n_valid, const BlockQ8Act* acts, int64_t n_tokens,
                int64_t n_blocks, float* y, int64_t ldy, const char* next, int64_t next_bytes) {
  constexpr int kRows = S::kPanelRows;
  static constexpr Q8Kernels<S, Kind, kRows, kRows / S::kRows> kFull;
  const int64_t n_calls = (n_tokens + S::kRN - 1) / S::kRN;
  const int64_t next_lines = (next_bytes + 63) / 64;
  const int64_t lines_per_call = (next_lines + n_calls - 1) / n_calls;
  const int lines_per_block = static_cast<int>((lines_per_call + n_blocks - 1) / n_blocks);
  int64_t hinted = 0;
  for (int64_t t = 0; t < n_tokens; t += S::kRN) {
    const int64_t call_lines =
        next_lines - hinted < lines_per_call ? next_lines - hinted : lines_per_call;
    const Hints hints = {next + hinted * 64, call_lines, lines_per_block};
    hinted += call_lines;
    const int64_t rn = n_tokens - t < S::kRN ? n_tokens - t : S::kRN;
    kFull.fn[rn - 1](panel, n_valid, acts + t * n_blocks, n_blocks, y + t * ldy, ldy, hints);
  }
}

// The GemmFn over the file's rows: per panel of kPanelRows rows a repack
// into scratch and a sweep.
template <typename S, typename Kind>
void Q8Tile(const void* w, size_t row_bytes, int64_t n_rows, const void* x, int64_t n_tokens,
            int64_t cols, float* y, int64_t ldy, void* scratch) {
  constexpr int kRows = S::kPanelRows;
  const int64_t n_blocks = cols / 32;
  const auto* acts = static_cast<const BlockQ8Act*>(x);
  uint8_t* panel = Align64(scratch);
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t r = 0; r < n_rows; r += kRows) {
    const int n_valid = n_rows - r < kRows ? static_cast<int>(n_rows - r) : kRows;
    PackPanel<Kind, kRows>(base + r * row_bytes, row_bytes, n_valid, n_blocks, panel);
    const int64_t next_rows = n_rows - r - n_valid < kRows ? n_rows - r - n_valid : kRows;
    SweepPanel<S, Kind>(panel, n_valid, acts, n_tokens, n_blocks, y + r, ldy,
                        reinterpret_cast<const char*>(base + (r + n_valid) * row_bytes),
                        next_rows * static_cast<int64_t>(row_bytes));
  }
}

// The table's pack_panels: n_rows rows of `cols` columns at w, row_bytes
// apart, as ceil(n_rows / kPanelRows) panels one after another at out.
template <typename S, typename Kind>
void Q8PackPanels(const void* w, size_t row_bytes, int64_t n_rows, int64_t cols, void* out) {
  constexpr int kRows = S::kPanelRows;
  const int64_t n_blocks = cols / 32;
  const auto* base = static_cast<const uint8_t*>(w);
  auto* panels = static_cast<uint8_t*>(out);
  for (int64_t r = 0; r < n_rows; r += kRows) {
    const int64_t n_valid = n_rows - r < kRows ? n_rows - r : kRows;
    PackPanel<Kind, kRows>(base + r * row_bytes, row_bytes, n_valid, n_blocks,
                           panels + (r / kRows) * PanelBytes<Kind, kRows>(n_blocks));
  }
}

// The table's unpack_panel_row: row `row` of the panels Q8PackPanels made
// from rows of `cols` columns, written at out as it was stored (row_bytes
// bytes): PackPanel undone for one row, so a matrix that is also looked up
// row by row (a token embedding tied to the output) needs no second copy.
template <typename S, typename Kind>
void Q8UnpackPanelRow(const void* panels, size_t /*row_bytes*/, int64_t row, int64_t cols,
                      void* out) {
  static_assert(std::is_same_v<Kind, Q8_0Codes> || std::is_same_v<Kind, Q8_0SignedCodes> ||
                    std::is_same_v<Kind, Q4_0Nibbles> || std::is_same_v<Kind, Q4_1Nibbles> ||
                    std::is_same_v<Kind, Q5_0Nibbles> || std::is_same_v<Kind, Q5_1Nibbles>,
                "the kinds PackPanel stores at load");
  using Block = typename Kind::Block;
  constexpr int kRows = S::kPanelRows;
  const int64_t n_blocks = cols / 32;
  const uint8_t* panel =
      static_cast<const uint8_t*>(panels) + (row / kRows) * PanelBytes<Kind, kRows>(n_blocks);
  const int64_t r = row % kRows;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* codes = panel + b * kPanelBlockBytes<Kind, kRows>;
    Block block;
    for (int g = 0; g < Kind::kStoredGroups; ++g) {
      std::memcpy(block.qs + 4 * g, codes + (g * kRows + r) * 4, 4);
    }
    if constexpr (std::is_same_v<Kind, Q8_0Codes>) {
      // Stored as code + 128 (Q8_0Codes::Codes).
      for (auto& q : block.qs) q = static_cast<int8_t>(static_cast<uint8_t>(q) ^ 0x80u);
    }
    if constexpr (Kind::kFifthBits) std::memcpy(block.qh, codes + kQhAt<kRows> + 4 * r, 4);
    const uint8_t* scales = codes + kScalesAt<Kind, kRows>;
    std::memcpy(&block.d, scales + 2 * r, sizeof(block.d));
    if constexpr (Kind::kHasMin) {
      uint16_t dmin = 0;  // stored negated (PackPanel)
      std::memcpy(&dmin, scales + 2 * (kRows + r), sizeof(dmin));
      block.m = static_cast<uint16_t>(dmin ^ 0x8000u);
    }
    std::memcpy(static_cast<uint8_t*>(out) + b * sizeof(Block), &block, sizeof(Block));
  }
}

// A nibble panel (NibblesOf) as its Widened one (each group of nibbles
// split into the two groups of bytes it holds, the scales and mins as they
// are).
template <typename Kind, int kRows>
void WidenNibbles(const uint8_t* panel, int64_t n_blocks, uint8_t* out) {
  constexpr size_t kGroupBytes = 4 * kRows;
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < n_blocks; ++b) {
    const uint8_t* from = panel + b * kPanelBlockBytes<Kind, kRows>;
    uint8_t* to = out + b * kPanelBlockBytes<typename Kind::Widened, kRows>;
    for (int g = 0; g < 4; ++g) {
      for (size_t i = 0; i < kGroupBytes; i += 32) {
        const __m256i raw =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + g * kGroupBytes + i));
        __m256i low = _mm256_and_si256(raw, nibble);
        __m256i high = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);
        if constexpr (Kind::kFifthBits) {
          const __m256i qh =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + kQhAt<kRows> + i));
          low = _mm256_or_si256(low, FifthBitsOfGroup(qh, g));
          high = _mm256_or_si256(high, FifthBitsOfGroup(qh, g + 4));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + g * kGroupBytes + i), low);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + (g + 4) * kGroupBytes + i), high);
      }
    }
    std::memcpy(to + 8 * kGroupBytes, from + kScalesAt<Kind, kRows>,
                (Kind::kHasMin ? 4 : 2) * kRows);
  }
}

// The table's gemm_panels: Q8Tile over panels Q8PackPanels made (w at the
// panel of the first row), no repack. Nibbles are widened to bytes once
// per panel where many sweep steps read it (prefill), cheaper than
// splitting them again in every step; up to 8 steps (a batch of 32
// decoding sequences) split them in place, which measured faster than
// widening (q4_0, 110M and TinyLlama shapes).
template <typename S, typename Kind>
void Q8TilePanels(const void* w, size_t /*row_bytes*/, int64_t n_rows, const void* x,
                  int64_t n_tokens, int64_t cols, float* y, int64_t ldy, void* scratch) {
  constexpr int kRows = S::kPanelRows;
  const int64_t n_blocks = cols / 32;
  const size_t panel_bytes = PanelBytes<Kind, kRows>(n_blocks);
  const auto* acts = static_cast<const BlockQ8Act*>(x);
  uint8_t* wide = Align64(scratch);
  constexpr bool kNibbles = Kind::kStoredGroups == 4;
  const bool widen = kNibbles && n_tokens > 8 * S::kRN;
  const auto* panels = static_cast<const uint8_t*>(w);
  for (int64_t r = 0; r < n_rows; r += kRows) {
    const int n_valid = n_rows - r < kRows ? static_cast<int>(n_rows - r) : kRows;
    const uint8_t* panel = panels + (r / kRows) * panel_bytes;
    // The panel after the last one too: the thread that claimed these rows
    // (ThreadPool::ParallelForClaimed) most likely runs it next. A hint
    // never faults, so one past the matrix costs nothing.
    const char* next = reinterpret_cast<const char*>(panel + panel_bytes);
    const auto next_bytes = static_cast<int64_t>(panel_bytes);
    if constexpr (kNibbles) {
      if (widen) {
        WidenNibbles<Kind, kRows>(panel, n_blocks, wide);
        SweepPanel<S, typename Kind::Widened>(wide, n_valid, acts, n_tokens, n_blocks, y + r, ldy,
                                              next, next_bytes);
        continue;
      }
    }
    SweepPanel<S, Kind>(panel, n_valid, acts, n_tokens, n_blocks, y + r, ldy, next, next_bytes);
  }
}

}  // namespace
}  // namespace h2o::kernels
