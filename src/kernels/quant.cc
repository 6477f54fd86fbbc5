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

bool HasDotRowQ8(TensorType type) { return RefKernels().For(type).dot_row_q8 != nullptr; }

void QuantizeActivation(const float* x, BlockQ8Act* dst, int64_t n) {
  H2O_CHECK(n >= 0 && n % 32 == 0);
  ActiveKernels().quantize_act(x, dst, n);
}

float DotRowQ8(TensorType type, const void* row, const BlockQ8Act* x, int64_t n) {
  CheckBlocks(type, n);
  H2O_CHECK(HasDotRowQ8(type));
  return ActiveKernels().For(type).dot_row_q8(row, x, n);
}

}  // namespace h2o::kernels
