#include "kernels/quant.h"

#include "core/status.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {
namespace {

void CheckBlocks(TensorType type, int64_t n) {
  H2O_CHECK(n >= 0 && n % TraitsOf(type).block_size == 0);
}

}  // namespace

void QuantizeRow(TensorType type, const float* src, void* dst, int64_t n) {
  CheckBlocks(type, n);
  ActiveKernels().For(type).quantize_row(src, dst, n);
}

void DequantizeRow(TensorType type, const void* src, float* dst, int64_t n) {
  CheckBlocks(type, n);
  ActiveKernels().For(type).dequantize_row(src, dst, n);
}

float DotRow(TensorType type, const void* row, const float* x, int64_t n) {
  CheckBlocks(type, n);
  return ActiveKernels().For(type).dot_row(row, x, n);
}

ActFormat ActivationFormat(TensorType type) {
  const TypeKernels& tk = RefKernels().For(type);
  if (tk.dot_row_q8 != nullptr) return ActFormat::kQ8;
  if (tk.dot_row_q8k != nullptr) return ActFormat::kQ8K;
  return ActFormat::kNone;
}

void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n) {
  H2O_CHECK(n >= 0 && n % 32 == 0);
  ActiveKernels().quantize_act(x, dst, n);
}

float DotRowQ8(TensorType type, const void* row, const BlockQ8Act* x, int64_t n) {
  CheckBlocks(type, n);
  H2O_CHECK(HasDotRowQ8(type));
  return ActiveKernels().For(type).dot_row_q8(row, x, n);
}

void QuantizeActivationK(const float* x, BlockQ8KAct* dst, int64_t n) {
  H2O_CHECK(n >= 0 && n % 256 == 0);
  ActiveKernels().quantize_act_k(x, dst, n);
}

float DotRowQ8K(TensorType type, const void* row, const BlockQ8KAct* x, int64_t n) {
  CheckBlocks(type, n);
  H2O_CHECK(HasDotRowQ8K(type));
  return ActiveKernels().For(type).dot_row_q8k(row, x, n);
}

}  // namespace h2o::kernels
