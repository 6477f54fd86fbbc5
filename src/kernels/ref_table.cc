#include "kernels/dispatch.h"
#include "kernels/ref.h"

namespace h2o::kernels {

const KernelTable& RefKernels() {
  static constexpr KernelTable kRef = {
      .name = "ref",
      .f32 = {ref::QuantizeRowF32, ref::DequantizeRowF32, ref::DotRowF32, nullptr},
      .f16 = {ref::QuantizeRowF16, ref::DequantizeRowF16, ref::DotRowF16, nullptr},
      .bf16 = {ref::QuantizeRowBF16, ref::DequantizeRowBF16, ref::DotRowBF16, nullptr},
      .q8_0 = {ref::QuantizeRowQ8_0, ref::DequantizeRowQ8_0, ref::DotRowQ8_0, ref::DotRowQ8Q8_0},
      .q4_0 = {ref::QuantizeRowQ4_0, ref::DequantizeRowQ4_0, ref::DotRowQ4_0, ref::DotRowQ8Q4_0},
      .rms_norm = ref::RmsNorm,
      .rope = ref::RopeInPlace,
      .softmax = ref::SoftmaxInPlace,
      .swiglu = ref::SwiGluInPlace,
      .axpy = ref::Axpy,
      .gemm_f32 = ref::GemmF32,
      .quantize_act = ref::QuantizeActivation,
      .kv_f32 = {ref::ScoreRowsF32, ref::WeightedSumRowsF32},
      .kv_f16 = {ref::ScoreRowsF16, ref::WeightedSumRowsF16},
  };
  return kRef;
}

}  // namespace h2o::kernels
