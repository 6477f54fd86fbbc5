// Internal to MatVec and MatMul: the two quantized activation formats
// (quant.h) behind one interface, so each product is written once for both.
#pragma once

#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/quant.h"

namespace h2o::kernels {

template <typename Act>
struct ActKind;

template <>
struct ActKind<BlockQ8Act> {
  static constexpr int64_t kElems = 32;
  static QuantizeActFn Quantize(const KernelTable& t) { return t.quantize_act; }
  static DotRowQ8Fn Dot(const TypeKernels& tk) { return tk.dot_row_q8; }
};

template <>
struct ActKind<BlockQ8KAct> {
  static constexpr int64_t kElems = 256;
  static QuantizeActKFn Quantize(const KernelTable& t) { return t.quantize_act_k; }
  static DotRowQ8KFn Dot(const TypeKernels& tk) { return tk.dot_row_q8k; }
};

}  // namespace h2o::kernels
