// Runtime kernel selection. Each backend (the scalar reference, AVX2,
// AVX-512) fills one KernelTable with functions of identical
// contracts; ActiveKernels() picks the best one the CPU supports once, at
// first use. Setting the environment variable H2O_KERNELS=<name> (e.g.
// "ref") forces a backend, which is how results are checked against the
// reference.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/ops.h"
#include "kernels/quant.h"

namespace h2o::kernels {

// Per-type row kernels; contracts of QuantizeRow, DequantizeRow and DotRow
// in quant.h (n is already known to be a multiple of the block size).
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n);
using DequantizeRowFn = void (*)(const void* src, float* dst, int64_t n);
using DotRowFn = float (*)(const void* row, const float* x, int64_t n);
// Contracts of QuantizeActivation(K) and DotRowQ8(K) in quant.h.
using QuantizeActFn = void (*)(const float* x, BlockQ8Act* dst, int64_t n);
using DotRowQ8Fn = float (*)(const void* row, const BlockQ8Act* x, int64_t n);
// y[r] = dot_row_q8(row r, x) bit for bit, for n_rows rows row_bytes apart.
using DotRowsQ8Fn = void (*)(const void* rows, size_t row_bytes, int64_t n_rows,
                             const BlockQ8Act* x, int64_t n, float* y);
using QuantizeActKFn = void (*)(const float* x, BlockQ8KAct* dst, int64_t n);
using DotRowQ8KFn = float (*)(const void* row, const BlockQ8KAct* x, int64_t n);

// MatMul's register-blocked product of n_rows weight rows (row_bytes apart,
// from w) with n_tokens activations: y[t * ldy + r] for r < n_rows, t <
// n_tokens. x holds the activations one after another in the type's
// ActFormat: kNone, cols floats each; kQ8, cols / 32 BlockQ8Act; kQ8K,
// cols / 256 BlockQ8KAct. Each y is computed by the same operations in the
// same order whatever n_rows, n_tokens and its place in the tile, so one
// call equals calls on any split of the rows and tokens bit for bit. For
// the quantized types it equals the table's own dot_row_q8 / dot_row_q8k;
// for the floats it is the order MatVec uses too (it calls this entry with
// n_tokens = 1), within float rounding of dot_row. scratch: at least
// GemmScratchBytes(cols, n_tokens) bytes, not shared with a concurrent
// call (nullptr is fine for the float types).
using GemmFn = void (*)(const void* w, size_t row_bytes, int64_t n_rows, const void* x,
                        int64_t n_tokens, int64_t cols, float* y, int64_t ldy, void* scratch);

// Scratch of every backend's GemmFn: a packed panel of up to 32 rows and
// room to align it to 64 bytes, whatever the tokens.
inline constexpr int64_t GemmScratchBytes(int64_t cols, int64_t /*n_tokens*/) {
  return 48 * cols + 256;
}

// A backend's own layout of a weight matrix, made once at load so that no
// GEMM repacks it per call (llama.cpp's CPU_REPACK): rows grouped into
// panels of 8, 16 or 32 (the backend's choice; a divisor of
// kPanelAlignRows), each panel's blocks interleaved for its tile. Offered
// only where it takes no more bytes than the rows themselves: the panels
// of `rows` rows fit in PanelsBytes(type, rows, cols). PackPanelsFn writes
// them from rows as stored (row_bytes apart); gemm_panels is then a GemmFn
// over them with the same contract and results as `gemm` over the rows,
// bit for bit, except that w points at the panel of the first row, which
// must be a multiple of kPanelAlignRows (row_bytes is that of the rows as
// stored).
using PackPanelsFn = void (*)(const void* w, size_t row_bytes, int64_t n_rows, int64_t cols,
                              void* out);
// Row `row` of such panels (of rows of `cols` columns) written at out as
// the row was stored, row_bytes bytes: PackPanelsFn undone for one row.
using UnpackPanelRowFn = void (*)(const void* panels, size_t row_bytes, int64_t row, int64_t cols,
                                  void* out);
inline constexpr int64_t kPanelAlignRows = 32;

// At most one of the integer dots is set: dot_row_q8 for the 32-element
// quantized types, dot_row_q8k for the K-quants, neither for the floats.
// pack_panels, gemm_panels and unpack_panel_row are set together or not at
// all.
struct TypeKernels {
  QuantizeRowFn quantize_row;
  DequantizeRowFn dequantize_row;
  DotRowFn dot_row;
  DotRowQ8Fn dot_row_q8 = nullptr;
  DotRowQ8KFn dot_row_q8k = nullptr;
  GemmFn gemm = nullptr;
  PackPanelsFn pack_panels = nullptr;
  GemmFn gemm_panels = nullptr;
  UnpackPanelRowFn unpack_panel_row = nullptr;
  // Many rows against one activation, where a backend has a loop for it
  // (nullptr: dot_row_q8 row by row).
  DotRowsQ8Fn dot_rows_q8 = nullptr;
  // What gemm (and gemm_panels) do, in a few words, so that a user can tell
  // which kernel multiplies their weights (h2o --version, bench); nullptr
  // where gemm is unset (the reference's row dots).
  const char* gemm_kind = nullptr;
};

// Contracts as the functions of the same name in ops.h.
using RmsNormFn = void (*)(const float* x, const float* weight, float* out, int64_t n, float eps);
using LayerNormFn = void (*)(const float* x, const float* weight, const float* bias, float* out,
                             int64_t n, float eps);
using RopeFn = void (*)(float* x, int64_t n_heads, int64_t head_dim, int64_t pos,
                        const RopeParams& rope);
using SoftmaxFn = void (*)(float* x, int64_t n);
using SwiGluFn = void (*)(float* gate, const float* up, int64_t n);
using GeGluFn = void (*)(float* gate, const float* up, int64_t n);
using GeluFn = void (*)(float* x, int64_t n);
using SoftcapFn = void (*)(float* x, int64_t n, float cap);
using AxpyFn = void (*)(float a, const float* x, float* y, int64_t n);
// y[t * ldy + r] = dot(w row r, x row t) for n_rows rows of w ([n_rows][cols])
// and n_tokens rows of x ([n_tokens][cols]).
using GemmF32Fn = void (*)(const float* w, int64_t n_rows, const float* x, int64_t n_tokens,
                           int64_t cols, float* y, int64_t ldy);

// Attention of a group of n_q query heads (GQA) over consecutive rows of a
// KV cache type (f32 or f16), d columns each. ScoreRows sets
// out[h * out_stride + r] = scale * dot(q[h * d ...], row r) for r in
// [0, n_rows); WeightedSumRows adds sum_r p[h * p_stride + r] * row r to
// out[h * d ...]. One call per run of slots for the whole group, so each
// row is loaded and widened once, not once per slot and head.
using ScoreRowsFn = void (*)(const float* q, int64_t n_q, const void* rows, int64_t n_rows,
                             int64_t d, float scale, float* out, int64_t out_stride);
using WeightedSumRowsFn = void (*)(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                                   int64_t n_rows, int64_t d, float* out);

struct KvRowKernels {
  ScoreRowsFn score_rows;
  WeightedSumRowsFn weighted_sum_rows;
};

// The KV row kernels of the other KV row types, derived from a backend's
// own per-type row kernels (kv_rows_block.h).
struct DerivedKvRowKernels {
  KvRowKernels bf16, q8_0, q4_0, q4_1, q5_0, q5_1;
};

struct KernelTable {
  const char* name;  // "ref", "avx2", "avx512"
  TypeKernels f32;
  TypeKernels f16;
  TypeKernels bf16;
  TypeKernels q8_0;
  TypeKernels q4_0;
  TypeKernels q4_1;
  TypeKernels q5_0;
  TypeKernels q5_1;
  TypeKernels q2_k;
  TypeKernels q3_k;
  TypeKernels q4_k;
  TypeKernels q5_k;
  TypeKernels q6_k;
  RmsNormFn rms_norm;
  LayerNormFn layer_norm;
  RopeFn rope;
  SoftmaxFn softmax;
  SwiGluFn swiglu;
  GeGluFn geglu;
  GeluFn gelu;
  SoftcapFn softcap;
  AxpyFn axpy;
  GemmF32Fn gemm_f32;
  QuantizeActFn quantize_act;
  QuantizeActKFn quantize_act_k;
  KvRowKernels kv_f32;
  KvRowKernels kv_f16;
  DerivedKvRowKernels kv_derived;

  // The row kernels of `type`; type must be runnable (IsRunnable, checked).
  const TypeKernels& For(TensorType type) const;
  // The attention kernels for K/V rows of `type`, one of KvRowTypes() (checked).
  const KvRowKernels& KvFor(TensorType type) const;
};

// The table's matrix kernels in lines of "types: gemm_kind", types that
// share a kind on one line ("f32, f16, bf16: FMA tile").
std::vector<std::string> DescribeMatrixKernels(const KernelTable& table);
// gemm_kind of one runnable type, in the same words (checked).
std::string DescribeMatrixKernel(const KernelTable& table, TensorType type);

// The types a KV cache can store K or V rows in (every backend has
// attention kernels for each): f32, f16, bf16, q8_0, q4_0, q4_1, q5_0,
// q5_1, in that order. Rows of a block type hold head_dim / 32 blocks, so
// such a type needs head_dim to be a multiple of 32.
std::span<const TensorType> KvRowTypes();
bool IsKvRowType(TensorType type);

// The scalar reference backend: always available, the ground truth that
// every other backend is tested against.
const KernelTable& RefKernels();

// Backends compiled in and supported by this CPU, best first; the last is
// always RefKernels(). Tables are static and live for the whole program.
std::vector<const KernelTable*> AvailableKernels();

// The backend named by `env_value` (the value of H2O_KERNELS; nullptr,
// empty or "auto" for the best available). An unknown or unavailable name
// prints one warning line to stderr and falls back to the best available.
const KernelTable& SelectKernels(const char* env_value);

// What "auto" selects: the best available table (AVX-512, then AVX2, then
// the reference).
const KernelTable& DefaultKernels();

// SelectKernels(getenv("H2O_KERNELS")), evaluated once (thread-safe static
// initialization) and then fixed for the life of the process.
const KernelTable& ActiveKernels();

}  // namespace h2o::kernels
