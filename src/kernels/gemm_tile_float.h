// The float types' GemmFn (f32, f16, bf16), written once over a SIMD
// backend S and a weight loader W, for the x86 files that include this
// (gemm_avx2.cc, gemm_avx512.cc); internal linkage, as their rules ask.
//
// Order of operations, the same for every (row, token) pair whatever the
// tile shape: one vector accumulator, lane l taking the elements k with
// k % S::kLanes == l by FMA in increasing k (the last partial vector loaded
// with zeros past the end), then ReduceInEights' fixed tree. So a product
// with one token (MatVec) and one with many (MatMul) agree bit for bit.
//
// Blocking: RM rows x RN tokens of accumulators, so one k step loads RM
// weight vectors and RN activation vectors for RM * RN FMAs (a plain dot
// loads two vectors per FMA and is bound by loads). f16 and bf16 widen to
// f32 in the register they are loaded into (exact; widening each panel
// once into scratch instead measured slower, 110M shape, 32 tokens).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/prefetch.h"

namespace h2o::kernels {
namespace {

// Cache lines to hint into L1 while a micro-kernel runs: n_lines from
// `at`, two before each k step (kHintsPerStep), so the hot loop past them
// is as it would be without hints (a hint loop inside it cost a fifth of
// the tile's rate). Into L1, not L2 (T0, not T1): on a Zen 5 VM, 110M f16
// single-sequence decode 5-19% faster, 32-sequence decode 2.6%, TinyLlama
// decode 1-4% (alternating in one run; prefill the same). On Sapphire
// Rapids the T0 form had measured no faster, with wide rows, whose
// activations already fill L1.
constexpr int64_t kHintsPerStep = 2;
// Decode's groups of 8 rows read twice the lines per step; so many hints
// keep up with them.
constexpr int64_t HintsPerStep(int rm) { return rm > 4 ? kHintsPerStep * rm / 4 : kHintsPerStep; }
struct FloatHints {
  const char* at = nullptr;
  int64_t n_lines = 0;
};

// f(std::integral_constant<int, i>{}) for i in [0, N): indices that are
// constants before any loop is unrolled, so that GCC keeps an array of
// accumulators indexed by them in registers from start to end (with loops,
// it stored them to the stack at every loop's exit and zeroed them there).
template <int N, int I = 0, typename F>
[[gnu::always_inline]] inline void ForEach(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    ForEach<N, I + 1>(f);
  }
}

// The fixed tree: each accumulator's S::Eight lanes b0..b7 summed as
// ((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7)), eight accumulators at
// a time (four hadds pair the lanes, two more pair the pairs, the low 128
// bits holding lanes 0-3 of each and the high 4-7, and one add joins the
// halves); sink(base, s) takes the sums of acc[base]..acc[base + 7] (zeros
// past N).
template <typename S, int N, typename Sink>
[[gnu::always_inline]] inline void ReduceInEights(const typename S::V (&acc)[N], Sink&& sink) {
  ForEach<(N + 7) / 8>([&](auto group) __attribute__((always_inline)) {
    constexpr int base = 8 * group;
    __m256 a[8];
    ForEach<8>([&](auto i) __attribute__((always_inline)) {
      if constexpr (base + i < N) {
        a[i] = S::Eight(acc[base + i]);
      } else {
        a[i] = _mm256_setzero_ps();
      }
    });
    const __m256 q0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    const __m256 q1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    sink(base,
         _mm256_add_ps(_mm256_permute2f128_ps(q0, q1, 0x20), _mm256_permute2f128_ps(q0, q1, 0x31)));
  });
}

// One k step: RM weight vectors at k against RN token vectors.
template <typename S, typename W, int RM, int RN, bool kPrefetch>
[[gnu::always_inline]] inline void FloatStep(const typename W::Elem* const (&rows)[RM],
                                             const float* x, int64_t cols, int64_t k,
                                             typename S::V (&acc)[RM * RN]) {
  using V = typename S::V;
  constexpr int64_t L = S::kLanes;
  V wv[RM];
  ForEach<RM>([&](auto r) __attribute__((always_inline)) {
    if constexpr (kPrefetch) PrefetchAhead(rows[r] + k, L * sizeof(typename W::Elem));
    wv[r] = W::Load(rows[r] + k);
  });
  ForEach<RN>([&](auto t) __attribute__((always_inline)) {
    const V xv = S::LoadX(x + t * cols + k);
    ForEach<RM>([&](auto r) __attribute__((always_inline)) {
      acc[t * RM + r] = S::Fma(wv[r], xv, acc[t * RM + r]);
    });
  });
}

// y[t * ldy + r] for the RM rows at w (row_bytes apart) and RN tokens at
// x (cols floats each). kPrefetch: the rows come from memory with nothing
// hinted them before (decode, and the first panel of a sweep), so hint
// them a kilobyte ahead. `hints`: lines of the next panel.
template <typename S, typename W, int RM, int RN, bool kPrefetch>
void FloatMicro(const uint8_t* w, size_t row_bytes, const float* x, int64_t cols, float* y,
                int64_t ldy, const FloatHints& hints) {
  using V = typename S::V;
  using Elem = typename W::Elem;
  constexpr int64_t L = S::kLanes;
  const Elem* rows[RM];
  for (int r = 0; r < RM; ++r) rows[r] = reinterpret_cast<const Elem*>(w + r * row_bytes);
  V acc[RM * RN];
  ForEach<RM * RN>([&](auto i) __attribute__((always_inline)) { acc[i] = S::Zero(); });
  int64_t k = 0;
  constexpr int64_t kPerStep = HintsPerStep(RM);
  for (int64_t line = 0; line < hints.n_lines && k + L <= cols; line += kPerStep, k += L) {
    for (int64_t j = 0; j < kPerStep; ++j) _mm_prefetch(hints.at + (line + j) * 64, _MM_HINT_T0);
    FloatStep<S, W, RM, RN, kPrefetch>(rows, x, cols, k, acc);
  }
  for (; k + L <= cols; k += L) FloatStep<S, W, RM, RN, kPrefetch>(rows, x, cols, k, acc);
  if (k < cols) {
    V wv[RM];
    ForEach<RM>([&](auto r)
                    __attribute__((always_inline)) { wv[r] = W::LoadTail(rows[r] + k, cols - k); });
    ForEach<RN>([&](auto t) __attribute__((always_inline)) {
      const V xv = S::LoadXTail(x + t * cols + k, cols - k);
      ForEach<RM>([&](auto r) __attribute__((always_inline)) {
        acc[t * RM + r] = S::Fma(wv[r], xv, acc[t * RM + r]);
      });
    });
  }
  // Sums i = t * RM + r, eight at a time, to y[t * ldy + r]: whole vectors
  // where eight sums are one token's rows (decode's groups of 8) or two
  // tokens' four (the AVX-512 tile), through memory where they are not.
  ReduceInEights<S>(
      acc, [ y, ldy ](int base, __m256 s) __attribute__((always_inline)) {
        if constexpr (RM % 8 == 0) {
          _mm256_storeu_ps(y + base / RM * ldy + base % RM, s);
        } else if constexpr (RM == 4) {
          _mm_storeu_ps(y + base / 4 * ldy, _mm256_castps256_ps128(s));
          if (base + 4 < RM * RN)
            _mm_storeu_ps(y + (base / 4 + 1) * ldy, _mm256_extractf128_ps(s, 1));
        } else {
          alignas(32) float sums[8];
          _mm256_store_ps(sums, s);
          for (int i = 0; i < 8 && base + i < RM * RN; ++i) {
            y[(base + i) / RM * ldy + (base + i) % RM] = sums[i];
          }
        }
      });
}

using FloatMicroFn = void (*)(const uint8_t*, size_t, const float*, int64_t, float*, int64_t,
                              const FloatHints&);

// Kernels[rm - 1][rn - 1] for the tails of a tile: every shape up to RM x RN.
template <typename S, typename W, int RM, int RN, bool kPrefetch>
struct FloatKernels {
  template <int... rn>
  static constexpr void Row(FloatMicroFn* out, auto rm, std::integer_sequence<int, rn...>) {
    ((out[rn] = &FloatMicro<S, W, decltype(rm)::value, rn + 1, kPrefetch>), ...);
  }
  template <int... rm>
  static constexpr void All(FloatMicroFn (*out)[RN], std::integer_sequence<int, rm...>) {
    (Row(out[rm], std::integral_constant<int, rm + 1>{}, std::make_integer_sequence<int, RN>()),
     ...);
  }
  FloatMicroFn fn[RM][RN] = {};
  constexpr FloatKernels() { All(fn, std::make_integer_sequence<int, RM>()); }
};

// Where a panel's sweep hints the next panel: n_lines from `at`, at most
// per_call of them per micro-kernel call.
struct NextPanel {
  const char* at;
  int64_t n_lines;
  int64_t per_call;
};

// Tokens for the call at a sweep's `left` last tokens: S::kRN, except that
// a remainder under half a call shares the last two calls evenly (32 tokens:
// 6 6 6 6 4 4, not 6 6 6 6 6 2). A call of one or two tokens widens the
// panel's rows for as few FMAs, and with a batch of 32 sequences that last
// call is a sixth of a decode step's calls (at 512 tokens, a 86th).
template <typename S>
int64_t CallTokens(int64_t left) {
  if (left <= S::kRN) return left;
  return left < S::kRN + S::kRN / 2 ? (left + 1) / 2 : S::kRN;
}

// The calls of a sweep over n_tokens tokens (CallTokens from the first
// token on), in order or reversed: call i covers tokens [Start(i), Start(i + 1)).
template <typename S>
struct SweepCalls {
  explicit SweepCalls(int64_t n_tokens) : n_tokens(n_tokens) {
    // Leading calls of S::kRN tokens: while at least 1.5 calls' tokens are left.
    constexpr int64_t kSplitAt = S::kRN + S::kRN / 2;
    full = n_tokens >= kSplitAt ? (n_tokens - kSplitAt) / S::kRN + 1 : 0;
    const int64_t left = n_tokens - full * S::kRN;
    split = left > 0 ? left - CallTokens<S>(left) : 0;  // second tail call's tokens
    count = full + (left > 0 ? 1 : 0) + (split > 0 ? 1 : 0);
  }
  int64_t Start(int64_t i) const {
    if (i <= full) return i * S::kRN;
    return i == count ? n_tokens : n_tokens - split;
  }
  int64_t n_tokens, full, split, count;
};

// All n_tokens tokens over the rm rows at w (calls of CallTokens, last to
// first when `reversed`), the next panel hinted along the way. first: the
// rows come from memory unhinted.
template <typename S, typename W>
void SweepPanel(const uint8_t* w, size_t row_bytes, int64_t rm, const float* x, int64_t n_tokens,
                int64_t cols, float* y, int64_t ldy, const NextPanel& next, bool first,
                bool reversed) {
  static constexpr FloatKernels<S, W, S::kRM, S::kRN, true> kFirst;
  static constexpr FloatKernels<S, W, S::kRM, S::kRN, false> kRest;
  const SweepCalls<S> calls(n_tokens);
  int64_t hinted = 0;
  for (int64_t done = 0; done < calls.count; ++done) {
    const int64_t i = reversed ? calls.count - 1 - done : done;
    const int64_t t = calls.Start(i), rn = calls.Start(i + 1) - t;
    const int64_t call_lines =
        next.n_lines - hinted < next.per_call ? next.n_lines - hinted : next.per_call;
    const FloatHints hints{next.at + hinted * 64, call_lines};
    hinted += call_lines;
    const FloatMicroFn fn =
        done == 0 && first ? kFirst.fn[rm - 1][rn - 1] : kRest.fn[rm - 1][rn - 1];
    fn(w, row_bytes, x + t * cols, cols, y + t * ldy, ldy, hints);
  }
}

// The GemmFn: panels of S::kRM rows, each swept over the tokens S::kRN at a
// time while its rows stay in L1. The first panel fetches its rows from
// memory as it goes, hinting ahead; every sweep hints the next panel's
// rows two lines per step from its first call on, so with few tokens
// (batched decode) the next panel does not wait on memory with nothing to
// overlap it (unhinted, the first call of each panel took 30% of a
// 32-sequence 110M f16 decode step for 6 of its 32 tokens). Spread evenly
// over a panel's calls instead, the last lines arrived just as the next
// panel began: 3-7% slower at 32 tokens with the weights in DRAM (f16,
// alternating in one run), the same at 512. Panels alternate the direction
// of their sweep, so that a panel's first call, whose rows come from L2 or
// memory, runs on the tokens whose activations the previous panel's last
// call left in L1: 32 tokens' f32 activations (96 KiB at 768 columns) do
// not fit L1, and a first call loading both its rows and its activations
// from L2 ran at half the rate of the calls after it (32-sequence 110M f16
// decode 12-17% faster this way, alternating in one run; pp512 the same;
// the q8 tiles, whose activations fit L1, gained nothing from it). One
// token (MatVec) takes S::kDecodeRows rows at a time instead: more
// independent accumulators and memory streams. The first group reads its
// rows kPrefetchBytes ahead; each group hints the next one's rows in order,
// as many lines per step as it reads itself (rows ahead of a row's own end
// are the next rows of the same group, so hinting within rows left each
// group's start waiting on memory: 110M f16 single-sequence decode 27-30%
// faster this way, TinyLlama f16 1-17%, alternating in one run).
template <typename S, typename W>
void FloatTile(const void* w, size_t row_bytes, int64_t n_rows, const void* x, int64_t n_tokens,
               int64_t cols, float* y, int64_t ldy, void* /*scratch*/) {
  const auto* base = static_cast<const uint8_t*>(w);
  const auto* xf = static_cast<const float*>(x);
  if (n_tokens == 1) {
    static constexpr FloatKernels<S, W, S::kDecodeRows, 1, true> kFirstGroup;
    static constexpr FloatKernels<S, W, S::kDecodeRows, 1, false> kDecode;
    for (int64_t r = 0; r < n_rows; r += S::kDecodeRows) {
      const int64_t rm = n_rows - r < S::kDecodeRows ? n_rows - r : S::kDecodeRows;
      const FloatHints next{reinterpret_cast<const char*>(base + (r + rm) * row_bytes),
                            (S::kDecodeRows * static_cast<int64_t>(row_bytes) + 63) / 64};
      const FloatMicroFn fn = r == 0 ? kFirstGroup.fn[rm - 1][0] : kDecode.fn[rm - 1][0];
      fn(base + r * row_bytes, row_bytes, xf, cols, y + r, ldy, next);
    }
    return;
  }
  const int64_t n_calls = SweepCalls<S>(n_tokens).count;
  // Lines one call can hint: two per full k step.
  const int64_t call_capacity = cols / S::kLanes * kHintsPerStep;
  bool hinted_before = false;
  for (int64_t r = 0; r < n_rows; r += S::kRM) {
    const int64_t rm = n_rows - r < S::kRM ? n_rows - r : S::kRM;
    // The rows after the last panel too, as the q8 tiles do (gemm_tile_q8.h,
    // Q8TilePanels).
    const int64_t next_lines = (S::kRM * static_cast<int64_t>(row_bytes) + 63) / 64;
    const NextPanel next{reinterpret_cast<const char*>(base + (r + rm) * row_bytes), next_lines,
                         call_capacity};
    SweepPanel<S, W>(base + r * row_bytes, row_bytes, rm, xf, n_tokens, cols, y + r, ldy, next,
                     !hinted_before, (r / S::kRM) % 2 == 1);
    hinted_before = next.per_call * n_calls >= next_lines;
  }
}

}  // namespace
}  // namespace h2o::kernels
