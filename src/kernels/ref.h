// The scalar reference kernels, exposed directly so that SIMD backends can
// be tested against them. Plain C++, no intrinsics; each has the contract
// of the public function of the same name (quant.h, ops.h), with the type
// in the name. Row functions require n to be a multiple of the block size
// (not checked here: the public wrappers check).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/ops.h"
#include "kernels/quant.h"

namespace h2o::kernels::ref {

void QuantizeRowF32(const float* src, void* dst, int64_t n);
void QuantizeRowF16(const float* src, void* dst, int64_t n);
void QuantizeRowBF16(const float* src, void* dst, int64_t n);
void QuantizeRowQ8_0(const float* src, void* dst, int64_t n);
void QuantizeRowQ4_0(const float* src, void* dst, int64_t n);
void QuantizeRowQ4_1(const float* src, void* dst, int64_t n);
void QuantizeRowQ5_0(const float* src, void* dst, int64_t n);
void QuantizeRowQ5_1(const float* src, void* dst, int64_t n);
void QuantizeRowQ2_K(const float* src, void* dst, int64_t n);
void QuantizeRowQ3_K(const float* src, void* dst, int64_t n);
void QuantizeRowQ4_K(const float* src, void* dst, int64_t n);
void QuantizeRowQ5_K(const float* src, void* dst, int64_t n);
void QuantizeRowQ6_K(const float* src, void* dst, int64_t n);

void DequantizeRowF32(const void* src, float* dst, int64_t n);
void DequantizeRowF16(const void* src, float* dst, int64_t n);
void DequantizeRowBF16(const void* src, float* dst, int64_t n);
void DequantizeRowQ8_0(const void* src, float* dst, int64_t n);
void DequantizeRowQ4_0(const void* src, float* dst, int64_t n);
void DequantizeRowQ4_1(const void* src, float* dst, int64_t n);
void DequantizeRowQ5_0(const void* src, float* dst, int64_t n);
void DequantizeRowQ5_1(const void* src, float* dst, int64_t n);
void DequantizeRowQ2_K(const void* src, float* dst, int64_t n);
void DequantizeRowQ3_K(const void* src, float* dst, int64_t n);
void DequantizeRowQ4_K(const void* src, float* dst, int64_t n);
void DequantizeRowQ5_K(const void* src, float* dst, int64_t n);
void DequantizeRowQ6_K(const void* src, float* dst, int64_t n);

float DotRowF32(const void* row, const float* x, int64_t n);
float DotRowF16(const void* row, const float* x, int64_t n);
float DotRowBF16(const void* row, const float* x, int64_t n);
float DotRowQ8_0(const void* row, const float* x, int64_t n);
float DotRowQ4_0(const void* row, const float* x, int64_t n);
float DotRowQ4_1(const void* row, const float* x, int64_t n);
float DotRowQ5_0(const void* row, const float* x, int64_t n);
float DotRowQ5_1(const void* row, const float* x, int64_t n);
float DotRowQ2_K(const void* row, const float* x, int64_t n);
float DotRowQ3_K(const void* row, const float* x, int64_t n);
float DotRowQ4_K(const void* row, const float* x, int64_t n);
float DotRowQ5_K(const void* row, const float* x, int64_t n);
float DotRowQ6_K(const void* row, const float* x, int64_t n);

// Exact int32 block sums, each scaled by d_w * d_x and added in order.
void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n);
float DotRowQ8Q8_0(const void* row, const BlockQ8Act* x, int64_t n);
float DotRowQ8Q4_0(const void* row, const BlockQ8Act* x, int64_t n);
float DotRowQ8Q4_1(const void* row, const BlockQ8Act* x, int64_t n);
float DotRowQ8Q5_0(const void* row, const BlockQ8Act* x, int64_t n);
float DotRowQ8Q5_1(const void* row, const BlockQ8Act* x, int64_t n);
// The same per super-block (exact int32 sums of sc * code * q and of
// m * q, scaled by d_w d_x and dmin_w d_x).
void QuantizeActivationK(const float* x, BlockQ8KAct* dst, int64_t n);
float DotRowQ8KQ2_K(const void* row, const BlockQ8KAct* x, int64_t n);
float DotRowQ8KQ3_K(const void* row, const BlockQ8KAct* x, int64_t n);
float DotRowQ8KQ4_K(const void* row, const BlockQ8KAct* x, int64_t n);
float DotRowQ8KQ5_K(const void* row, const BlockQ8KAct* x, int64_t n);
float DotRowQ8KQ6_K(const void* row, const BlockQ8KAct* x, int64_t n);

void RmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps);
void LayerNorm(const float* x, const float* weight, const float* bias, float* out, int64_t n,
               float eps);
void RopeInPlace(float* x, int64_t n_heads, int64_t head_dim, int64_t pos, const RopeParams& rope);
void SoftmaxInPlace(float* x, int64_t n);
void SwiGluInPlace(float* gate, const float* up, int64_t n);
void GeGluInPlace(float* gate, const float* up, int64_t n);
void GeluInPlace(float* x, int64_t n);
void SoftcapInPlace(float* x, int64_t n, float cap);
void Axpy(float a, const float* x, float* y, int64_t n);
void GemmF32(const float* w, int64_t n_rows, const float* x, int64_t n_tokens, int64_t cols,
             float* y, int64_t ldy);

// The activation type of a row dot: float, BlockQ8Act or BlockQ8KAct.
template <typename DotFn>
struct DotActivation;
template <>
struct DotActivation<float (*)(const void*, const float*, int64_t)> {
  using type = float;
  static constexpr int64_t kElems = 1;
};
template <typename Act>
struct DotActivation<float (*)(const void*, const Act*, int64_t)> {
  using type = Act;
  static constexpr int64_t kElems = sizeof(Act::qs);
};

// The reference GemmFn (dispatch.h) over a row dot above (DotRowF16,
// DotRowQ8Q8_0, DotRowQ8KQ4_K, ...): y is that dot of each (row, token)
// pair, so MatMul on this backend equals MatVec call for call. The SIMD
// tiles are tested against these.
template <auto kDot>
void GemmTile(const void* w, size_t row_bytes, int64_t n_rows, const void* x, int64_t n_tokens,
              int64_t cols, float* y, int64_t ldy, void* /*scratch*/) {
  using Act = DotActivation<decltype(kDot)>;
  const auto* rows = static_cast<const uint8_t*>(w);
  const auto* acts = static_cast<const typename Act::type*>(x);
  const int64_t act_stride = cols / Act::kElems;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < n_rows; ++r) {
      y[t * ldy + r] = kDot(rows + r * row_bytes, acts + t * act_stride, cols);
    }
  }
}
void ScoreRowsF32(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride);
void ScoreRowsF16(const float* q, int64_t n_q, const void* rows, int64_t n_rows, int64_t d,
                  float scale, float* out, int64_t out_stride);
void WeightedSumRowsF32(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out);
void WeightedSumRowsF16(const float* p, int64_t p_stride, int64_t n_q, const void* rows,
                        int64_t n_rows, int64_t d, float* out);

}  // namespace h2o::kernels::ref
