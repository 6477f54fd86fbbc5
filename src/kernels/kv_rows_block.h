// Attention row kernels (ScoreRowsFn, WeightedSumRowsFn in dispatch.h) for
// K/V rows stored in a type other than f32/f16: bf16 and the 32-element
// block quantizations (q8_0, q4_0, q4_1, q5_0, q5_1). They are built from a
// backend's own per-type row kernels, so each backend gets its SIMD loops
// without a second hand-written set (a backend may still replace the ones
// that matter most for speed, as AVX2 and AVX-512 do q8_0's weighted sums):
//   - scores: each K row dotted with each float query head by the type's
//     dot_row, which widens the stored values exactly; the query is not
//     rounded to 8 bits, so a quantized K adds only its own rounding.
//     q8_0 is the exception (ScoreRowsByQuantizedQuery): its query heads are
//     quantized as activations are and scored by the backend's integer GEMM
//     tile, as llama.cpp scores q8_0 K;
//   - weighted sums: each V row is widened once, a block-aligned piece at a
//     time, then added to every head's output with the table's axpy.
// Each head's result is computed alone, whatever the other heads of the
// call (the chunked prefill's bit-identity with per-query calls rests on
// it).
//
// Included by the backend table files only; `Table` is the backend's table
// accessor (RefKernels, Avx2Kernels, ...), read at call time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/quant.h"

namespace h2o::kernels {
namespace {  // internal linkage: each backend file compiles its own copy

using TableFn = const KernelTable& (*)();

template <TableFn Table, TensorType kType>
void ScoreRowsByFloatDot(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                         float scale, float* out, int64_t out_stride) {
  const DotRowFn dot = Table().For(kType).dot_row;
  const size_t row_bytes = RowBytes(kType, d);
  for (int64_t r = 0; r < n_rows; ++r) {
    const void* row = static_cast<const uint8_t*>(rows) + r * row_bytes;
    for (int64_t h = 0; h < n_q; ++h) out[h * out_stride + r] = scale * dot(row, q + h * d, d);
  }
}

template <TableFn Table, TensorType kType>
void WeightedSumRowsByWidening(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                               int64_t n_rows, int64_t d, float* out) {
  const KernelTable& kt = Table();
  const DequantizeRowFn widen = kt.For(kType).dequantize_row;
  const size_t row_bytes = RowBytes(kType, d);
  // A piece of a row at a time: whole blocks, and few enough floats to stay
  // in L1 across the heads.
  constexpr int64_t kPiece = 256;
  float wide[kPiece];
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint8_t* row = static_cast<const uint8_t*>(rows) + r * row_bytes;
    for (int64_t c0 = 0; c0 < d; c0 += kPiece) {
      const int64_t n = d - c0 < kPiece ? d - c0 : kPiece;
      widen(row + RowBytes(kType, c0), wide, n);
      for (int64_t h = 0; h < n_q; ++h) kt.axpy(p[h * p_stride + r], wide, out + h * d + c0, n);
    }
  }
}

// Scores of K rows with an integer dot (dot_row_q8) against query heads
// quantized as MatMul quantizes activations (quantize_act: per 32 values,
// d = max |q| / 127), by the type's GEMM tile with the heads as its tokens:
// every row is read once for up to kHeads heads, and no row is widened to
// floats. Each score is scale * dot_row_q8(row, quantized head) bit for bit
// (GemmFn's contract), so a head's scores do not depend on the others of
// the call. The query's rounding adds at most sum_i |k_i| * d / 2 per block
// to a score (before scale). Head sizes over kMaxDim, which no model we
// know has, keep the float dot.
template <TableFn Table, TensorType kType>
void ScoreRowsByQuantizedQuery(const float* q, int64_t n_q, const void* rows, int64_t n_rows,
                               int64_t d, float scale, float* out, int64_t out_stride) {
  constexpr int64_t kHeads = 8;
  constexpr int64_t kFewestForTile = 4;
  constexpr int64_t kMaxDim = 512;
  if (d > kMaxDim) {
    ScoreRowsByFloatDot<Table, kType>(q, n_q, rows, n_rows, d, scale, out, out_stride);
    return;
  }
  const KernelTable& kt = Table();
  const TypeKernels& type = kt.For(kType);
  const size_t row_bytes = RowBytes(kType, d);
  const int64_t n_blocks = d / 32;
  alignas(64) BlockQ8Act heads[kHeads * kMaxDim / 32];
  alignas(64) uint8_t scratch[GemmScratchBytes(kMaxDim, kHeads)];
  for (int64_t h0 = 0; h0 < n_q; h0 += kHeads) {
    const int64_t m = n_q - h0 < kHeads ? n_q - h0 : kHeads;
    for (int64_t h = 0; h < m; ++h) kt.quantize_act(q + (h0 + h) * d, heads + h * n_blocks, d);
    float* y = out + h0 * out_stride;
    if (m >= kFewestForTile) {
      type.gemm(rows, row_bytes, n_rows, heads, m, d, y, out_stride, scratch);
    } else if (type.dot_rows_q8 != nullptr) {
      // Too few heads to pay for packing the rows into the tile's panels.
      for (int64_t h = 0; h < m; ++h) {
        type.dot_rows_q8(rows, row_bytes, n_rows, heads + h * n_blocks, d, y + h * out_stride);
      }
    } else {
      for (int64_t r = 0; r < n_rows; ++r) {
        const void* row = static_cast<const uint8_t*>(rows) + r * row_bytes;
        for (int64_t h = 0; h < m; ++h) {
          y[h * out_stride + r] = type.dot_row_q8(row, heads + h * n_blocks, d);
        }
      }
    }
    for (int64_t h = 0; h < m; ++h) {
      for (int64_t r = 0; r < n_rows; ++r) y[h * out_stride + r] *= scale;
    }
  }
}

template <TableFn Table, TensorType kType>
constexpr KvRowKernels WideningKvRows() {
  return {ScoreRowsByFloatDot<Table, kType>, WeightedSumRowsByWidening<Table, kType>};
}

template <TableFn Table>
constexpr DerivedKvRowKernels DeriveKvRowKernels() {
  return {
      .bf16 = WideningKvRows<Table, TensorType::kBF16>(),
      .q8_0 = {ScoreRowsByQuantizedQuery<Table, TensorType::kQ8_0>,
               WeightedSumRowsByWidening<Table, TensorType::kQ8_0>},
      .q4_0 = WideningKvRows<Table, TensorType::kQ4_0>(),
      .q4_1 = WideningKvRows<Table, TensorType::kQ4_1>(),
      .q5_0 = WideningKvRows<Table, TensorType::kQ5_0>(),
      .q5_1 = WideningKvRows<Table, TensorType::kQ5_1>(),
  };
}

}  // namespace
}  // namespace h2o::kernels
