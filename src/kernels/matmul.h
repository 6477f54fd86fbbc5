// Weight matrix times a batch of activation vectors (prefill / chunks).
#pragma once

#include <cstdint>
#include <span>

#include "core/tensor_type.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {

// Floats of scratch MatMul needs for up to n_tokens tokens of at most cols
// columns with a pool of n_threads threads (the caller counted): a
// dequantized row per thread, or the quantized activations of the batch,
// whichever is larger. Thread-safe, pure.
int64_t MatMulScratchFloats(int64_t cols, int64_t n_tokens, int n_threads);

// y[t][r] = dot(w row r, x[t]) for t in [0, n_tokens), r in [0, rows).
// w: [rows][cols] in `type`; x: [n_tokens][cols]; y: [n_tokens][rows].
// Each weight row is read from memory once for the whole batch, which is
// what makes prefill faster per token than decode: a float-type row is
// dotted with every token (f16/bf16 dequantized once first); for the
// quantized types, which all have an integer dot, the batch is quantized
// once (QuantizeActivation or QuantizeActivationK, by ActivationFormat) and
// each row gets DotRowQ8 or DotRowQ8K with every token, so the result is
// bit-identical to n_tokens MatVec calls. For the float types it
// equals them within float rounding. scratch: MatMulScratchFloats(cols,
// n_tokens, pool threads) floats, owned by the caller, not shared with a
// concurrent call. Rows are split over the pool (nullptr: the caller alone).
void MatMul(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
            int64_t n_tokens, float* y, float* scratch, ThreadPool* pool);

// Weights repacked once into the active backend's panels (dispatch.h,
// TypeKernels::pack_panels), for every product after: no per-call repack,
// and one-token products (decode) run the same tile. Only where
// PanelsOffered(type): the panels take PanelsBytes(type, rows, cols) bytes,
// no more than the rows rounded up to kPanelAlignRows.
bool PanelsOffered(TensorType type);
size_t PanelsBytes(TensorType type, int64_t rows, int64_t cols);
// Packs rows x cols weights stored as rows at w into `out` (PanelsBytes
// bytes), rows split over the pool.
void PackPanels(TensorType type, const void* w, int64_t rows, int64_t cols, void* out,
                ThreadPool* pool);
// Row `row` of panels PackPanels made, written at out as the row was stored
// (RowBytes(type, cols) bytes).
void UnpackPanelRow(TensorType type, const void* panels, int64_t row, int64_t cols, void* out);
// MatMul over panels PackPanels made: the same y, bit for bit, for any
// n_tokens (1 included); scratch as MatMul's.
void MatMulPanels(TensorType type, const void* panels, int64_t rows, int64_t cols, const float* x,
                  int64_t n_tokens, float* y, float* scratch, ThreadPool* pool);
// Whether rows [first, ...) of a matrix in either layout are themselves a
// matrix of that layout starting first * row_bytes in (a panel starts there).
bool RowsSplitAt(bool panels, int64_t first);

// One product of a batch that several weight matrices share: y[t * y_stride
// + r] = dot(w row r, x[t]) (+ bias[r] when bias is not null).
struct SharedProduct {
  const void* w;  // rows as stored, or panels (MatMulPanels)
  int64_t rows;
  float* y;
  int64_t y_stride;  // >= rows
  const float* bias;
};

// The most products MatMulShared takes at once.
inline constexpr size_t kMaxSharedProducts = 4;

// The products of one x by matrices of one type and layout (panels or rows
// as stored), each the y of MatMul / MatMulPanels bit for bit, at the cost
// of one pass of the pool, in which the threads quantize x together and
// then claim chunks of the products' rows. When `after` is given (all
// products then have the same rows), a chunk is the same rows [begin, end)
// of every product and the thread that ran it calls after(begin, end)
// right away, so an element-wise step on those rows (the gate of a gated
// FFN) runs there instead of on one thread after. At most
// kMaxSharedProducts products. scratch as MatMul's for cols and n_tokens.
void MatMulShared(TensorType type, bool panels, std::span<const SharedProduct> products,
                  int64_t cols, const float* x, int64_t n_tokens, float* scratch, ThreadPool* pool,
                  const RangeFn* after = nullptr);

}  // namespace h2o::kernels
