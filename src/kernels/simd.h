// The x86 SIMD backends of the kernel table. Each lives in its own source
// file compiled with its own target flags (simd_avx2.cc: AVX2 + FMA + F16C;
// simd_avx512.cc: AVX-512 F/BW/VL/DQ on top), so nothing from those files
// may run before the matching CPU check below has passed; dispatch.cc does
// that check once, and AvailableKernels() only lists tables the CPU runs.
// Contracts are those of the reference kernels (ref.h), which every entry
// is tested against (tests/kernels/simd_test.cc).
#pragma once

#include <cstdint>

#include "kernels/dispatch.h"

namespace h2o::kernels {

// Whether this CPU and OS run the AVX2 table: AVX2, FMA and F16C, with the
// YMM state enabled by the OS. Thread-safe.
bool CpuHasAvx2();

// Whether this CPU and OS run the AVX-512 table: everything CpuHasAvx2()
// asks plus AVX-512 F, BW, VL and DQ with the ZMM state enabled.
bool CpuHasAvx512();

#if defined(H2O_KERNELS_X86_SIMD)

// The tables. Requires CpuHasAvx2() / CpuHasAvx512() (not checked: the
// check itself would be compiled for the target it guards).
const KernelTable& Avx2Kernels();
const KernelTable& Avx512Kernels();

// y[i] = exp(x[i]) for i in [0, n), with the vectorized approximation that
// SoftmaxInPlace, SwiGluInPlace and the GELU family of each backend use: at most about 1 ulp
// (relative error < 2e-7) over the whole float range, exact 0 below
// -103.97 (and for -inf), inf above 88.72. y may alias x. Exposed so the
// tests can measure its accuracy; same requirements as the tables.
namespace avx2 {
void ExpRow(const float* x, float* y, int64_t n);
// The norms (simd_avx2_norm.cc) and the tanh-based activations
// (simd_avx2_act.cc). The AVX-512 table reuses all but RmsNorm: one pass
// over n_embd or n_ff floats per token is bound by memory, not by the
// register width.
void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps);
void LayerNorm(const float* x, const float* weight, const float* bias, float* out, int64_t n,
               float eps);
void GeluInPlace(float* x, int64_t n);
void GeGluInPlace(float* gate, const float* up, int64_t n);
void SoftcapInPlace(float* x, int64_t n, float cap);
// Also the AVX-512 table's RoPE (rope_avx2.cc: double-precision rotation,
// bit-identical to the reference; 512-bit registers would not change its
// cost).
void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, const RopeParams& rope);
// f16 rows from floats, F16C's conversion (the KV cache's append, once per
// token and layer; weights convert with the reference at load). The
// AVX-512 table's too.
void QuantizeRowF16(const float* src, void* dst, int64_t n);
// The integer-dot entries (256-bit AVX2 integer code, which the AVX-512
// table reuses; AVX-512 VNNI would be the next step there).
void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n);
float DotRowQ8Q8_0(const void* row, const BlockQ8Act* x, int64_t n);
void DotRowsQ8Q8_0(const void* rows, size_t row_bytes, int64_t n_rows, const BlockQ8Act* x,
                   int64_t n, float* y);
float DotRowQ8Q4_0(const void* row, const BlockQ8Act* x, int64_t n);
// The row kernels of q4_1, q5_0, q5_1 (simd_avx2_quants.cc) and of the
// K-quants with their activation quantizer (simd_avx2_kquants.cc);
// quantize_row is the reference's.
TypeKernels Q4_1Kernels();
TypeKernels Q5_0Kernels();
TypeKernels Q5_1Kernels();
TypeKernels Q2_KKernels();
TypeKernels Q3_KKernels();
TypeKernels Q4_KKernels();
TypeKernels Q5_KKernels();
TypeKernels Q6_KKernels();
void QuantizeActivationK(const float* x, BlockQ8KAct* dst, int64_t n);
void GemmF32(const float* w, int64_t n_rows, const float* x, int64_t n_tokens, int64_t cols,
             float* y, int64_t ldy);
// t with every type's gemm entry set to its AVX2 tile (gemm_avx2.cc): the
// 32-element quantized types get the AVX-VNNI tiles where the CPU has
// AVX-VNNI (SetVnniTiles, gemm_q8_avxvnni.cc), else the same tile on
// maddubs (SetMaddubsTiles, gemm_q8_avx2.cc); the K-quants their maddubs
// tile (SetKQuantTiles, gemm_kquant_avx2.cc).
KernelTable WithGemmTiles(KernelTable t);
void SetVnniTiles(KernelTable& t);
void SetMaddubsTiles(KernelTable& t);
// A quantized type's GemmFn as its AVX2 row dot per (row, token) pair
// (gemm_avx2.cc), or its many-rows dot per token where it has one (q8_0:
// the scores of a q8_0 K cache, 4 query heads a call, ran 8% faster in a
// 2048-token prefill). The maddubs tiles run it below kMinTileTokens
// tokens, where repacking a panel per call costs more than the tile saves
// (decode: the Q, K, V and gate, up products of one token).
void DotLoop(TensorType type, const void* w, size_t row_bytes, int64_t n_rows, const void* x,
             int64_t n_tokens, int64_t cols, float* y, int64_t ldy);
inline constexpr int64_t kMinTileTokens = 12;
void SetKQuantTiles(KernelTable& t);
// The attention row kernels (attention_avx2.cc); head_dim rows of 64-128
// floats gain nothing from 512-bit registers.
void ScoreRowsF32(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride);
void ScoreRowsF16(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride);
void WeightedSumRowsF32(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out);
void WeightedSumRowsF16(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out);
// The same for q8_0 rows (attention_q8_avx2.cc); d a multiple of 32.
void WeightedSumRowsQ8_0(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                         int64_t n_rows, int64_t d, float* out);
}  // namespace avx2
namespace avx512 {
void ExpRow(const float* x, float* y, int64_t n);
// Sets t's float types' gemm entries to the AVX-512 tiles (gemm_avx512.cc),
// and the 32-element quantized types' to the AVX-512 VNNI tiles
// (SetVnniTiles, gemm_q8_avx512.cc) where the CPU has AVX512_VNNI.
void SetGemmTiles(KernelTable& t);
void SetVnniTiles(KernelTable& t);
}  // namespace avx512

#endif  // H2O_KERNELS_X86_SIMD

}  // namespace h2o::kernels
