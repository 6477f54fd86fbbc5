// The float types' GemmFn (f32, f16, bf16), written once over a SIMD
// backend S and a weight loader W, for the x86 files that include this
// (gemm_avx2.cc, gemm_avx512.cc); internal linkage, as their rules ask.
//
// Order of operations, the same for every (row, token) pair whatever the
// tile shape: one vector accumulator, lane l taking the elements k with
// k % S::kLanes == l by FMA in increasing k (the last partial vector loaded
// with zeros past the end), then S::Reduce's fixed tree. So a product with
// one token (MatVec) and one with many (MatMul) agree bit for bit.
//
// Blocking: RM rows x RN tokens of accumulators, so one k step loads RM
// weight vectors and RN activation vectors for RM * RN FMAs (a plain dot
// loads two vectors per FMA and is bound by loads). f16 and bf16 widen to
// f32 in the register they are loaded into (exact, so no staging copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/prefetch.h"

namespace h2o::kernels {
namespace {

// y[t * ldy + r] for the RM rows at w (row_bytes apart) and RN tokens at
// x (cols floats each). kPrefetch: the rows come from memory (the first
// token group of a panel, and decode), so hint them a kilobyte ahead.
template <typename S, typename W, int RM, int RN, bool kPrefetch>
void FloatMicro(const uint8_t* w, size_t row_bytes, const float* x, int64_t cols, float* y,
                int64_t ldy) {
  using V = typename S::V;
  using Elem = typename W::Elem;
  constexpr int64_t L = S::kLanes;
  const Elem* rows[RM];
  for (int r = 0; r < RM; ++r) rows[r] = reinterpret_cast<const Elem*>(w + r * row_bytes);
  V acc[RM * RN];
  for (int i = 0; i < RM * RN; ++i) acc[i] = S::Zero();
  int64_t k = 0;
  for (; k + L <= cols; k += L) {
    V wv[RM];
    for (int r = 0; r < RM; ++r) {
      if constexpr (kPrefetch) PrefetchAhead(rows[r] + k, L * sizeof(Elem));
      wv[r] = W::Load(rows[r] + k);
    }
    for (int t = 0; t < RN; ++t) {
      const V xv = S::LoadX(x + t * cols + k);
      for (int r = 0; r < RM; ++r) acc[t * RM + r] = S::Fma(wv[r], xv, acc[t * RM + r]);
    }
  }
  if (k < cols) {
    V wv[RM];
    for (int r = 0; r < RM; ++r) wv[r] = W::LoadTail(rows[r] + k, cols - k);
    for (int t = 0; t < RN; ++t) {
      const V xv = S::LoadXTail(x + t * cols + k, cols - k);
      for (int r = 0; r < RM; ++r) acc[t * RM + r] = S::Fma(wv[r], xv, acc[t * RM + r]);
    }
  }
  float sums[RM * RN];
  S::template Reduce<RM * RN>(acc, sums);
  for (int t = 0; t < RN; ++t) {
    for (int r = 0; r < RM; ++r) y[t * ldy + r] = sums[t * RM + r];
  }
}

using FloatMicroFn = void (*)(const uint8_t*, size_t, const float*, int64_t, float*, int64_t);

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

// The GemmFn: panels of S::kRM rows, each swept over the tokens S::kRN at a
// time while its rows stay in L1 (only the first group fetches them from
// memory, and hints ahead). One token (MatVec) takes S::kDecodeRows rows at
// a time instead: more independent accumulators and memory streams.
template <typename S, typename W>
void FloatTile(const void* w, size_t row_bytes, int64_t n_rows, const void* x, int64_t n_tokens,
               int64_t cols, float* y, int64_t ldy, void* /*scratch*/) {
  const auto* base = static_cast<const uint8_t*>(w);
  const auto* xf = static_cast<const float*>(x);
  if (n_tokens == 1) {
    static constexpr FloatKernels<S, W, S::kDecodeRows, 1, true> kDecode;
    for (int64_t r = 0; r < n_rows; r += S::kDecodeRows) {
      const int64_t rm = n_rows - r < S::kDecodeRows ? n_rows - r : S::kDecodeRows;
      kDecode.fn[rm - 1][0](base + r * row_bytes, row_bytes, xf, cols, y + r, ldy);
    }
    return;
  }
  static constexpr FloatKernels<S, W, S::kRM, S::kRN, true> kFirst;
  static constexpr FloatKernels<S, W, S::kRM, S::kRN, false> kRest;
  for (int64_t r = 0; r < n_rows; r += S::kRM) {
    const int64_t rm = n_rows - r < S::kRM ? n_rows - r : S::kRM;
    for (int64_t t = 0; t < n_tokens; t += S::kRN) {
      const int64_t rn = n_tokens - t < S::kRN ? n_tokens - t : S::kRN;
      const FloatMicroFn fn = t == 0 ? kFirst.fn[rm - 1][rn - 1] : kRest.fn[rm - 1][rn - 1];
      fn(base + r * row_bytes, row_bytes, xf + t * cols, cols, y + t * ldy + r, ldy);
    }
  }
}

}  // namespace
}  // namespace h2o::kernels
