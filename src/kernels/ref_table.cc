#include "kernels/dispatch.h"
#include "kernels/kv_rows_block.h"
#include "kernels/ref.h"

namespace h2o::kernels {

const KernelTable& RefKernels() {
  static constexpr KernelTable kRef = {
      .name = "ref",
      .f32 = {ref::QuantizeRowF32, ref::DequantizeRowF32, ref::DotRowF32, nullptr, nullptr,
              ref::GemmTile<ref::DotRowF32>},
      .f16 = {ref::QuantizeRowF16, ref::DequantizeRowF16, ref::DotRowF16, nullptr, nullptr,
              ref::GemmTile<ref::DotRowF16>},
      .bf16 = {ref::QuantizeRowBF16, ref::DequantizeRowBF16, ref::DotRowBF16, nullptr, nullptr,
               ref::GemmTile<ref::DotRowBF16>},
      .q8_0 = {ref::QuantizeRowQ8_0, ref::DequantizeRowQ8_0, ref::DotRowQ8_0, ref::DotRowQ8Q8_0,
               nullptr, ref::GemmTile<ref::DotRowQ8Q8_0>},
      .q4_0 = {ref::QuantizeRowQ4_0, ref::DequantizeRowQ4_0, ref::DotRowQ4_0, ref::DotRowQ8Q4_0,
               nullptr, ref::GemmTile<ref::DotRowQ8Q4_0>},
      .q4_1 = {ref::QuantizeRowQ4_1, ref::DequantizeRowQ4_1, ref::DotRowQ4_1, ref::DotRowQ8Q4_1,
               nullptr, ref::GemmTile<ref::DotRowQ8Q4_1>},
      .q5_0 = {ref::QuantizeRowQ5_0, ref::DequantizeRowQ5_0, ref::DotRowQ5_0, ref::DotRowQ8Q5_0,
               nullptr, ref::GemmTile<ref::DotRowQ8Q5_0>},
      .q5_1 = {ref::QuantizeRowQ5_1, ref::DequantizeRowQ5_1, ref::DotRowQ5_1, ref::DotRowQ8Q5_1,
               nullptr, ref::GemmTile<ref::DotRowQ8Q5_1>},
      .q2_k = {ref::QuantizeRowQ2_K, ref::DequantizeRowQ2_K, ref::DotRowQ2_K, nullptr,
               ref::DotRowQ8KQ2_K, ref::GemmTile<ref::DotRowQ8KQ2_K>},
      .q3_k = {ref::QuantizeRowQ3_K, ref::DequantizeRowQ3_K, ref::DotRowQ3_K, nullptr,
               ref::DotRowQ8KQ3_K, ref::GemmTile<ref::DotRowQ8KQ3_K>},
      .q4_k = {ref::QuantizeRowQ4_K, ref::DequantizeRowQ4_K, ref::DotRowQ4_K, nullptr,
               ref::DotRowQ8KQ4_K, ref::GemmTile<ref::DotRowQ8KQ4_K>},
      .q5_k = {ref::QuantizeRowQ5_K, ref::DequantizeRowQ5_K, ref::DotRowQ5_K, nullptr,
               ref::DotRowQ8KQ5_K, ref::GemmTile<ref::DotRowQ8KQ5_K>},
      .q6_k = {ref::QuantizeRowQ6_K, ref::DequantizeRowQ6_K, ref::DotRowQ6_K, nullptr,
               ref::DotRowQ8KQ6_K, ref::GemmTile<ref::DotRowQ8KQ6_K>},
      .rms_norm = ref::RmsNorm,
      .layer_norm = ref::LayerNorm,
      .rope = ref::RopeInPlace,
      .softmax = ref::SoftmaxInPlace,
      .swiglu = ref::SwiGluInPlace,
      .geglu = ref::GeGluInPlace,
      .gelu = ref::GeluInPlace,
      .softcap = ref::SoftcapInPlace,
      .axpy = ref::Axpy,
      .gemm_f32 = ref::GemmF32,
      .quantize_act = ref::QuantizeActivation,
      .quantize_act_k = ref::QuantizeActivationK,
      .kv_f32 = {ref::ScoreRowsF32, ref::WeightedSumRowsF32},
      .kv_f16 = {ref::ScoreRowsF16, ref::WeightedSumRowsF16},
      .kv_derived = DeriveKvRowKernels<RefKernels>(),
  };
  return kRef;
}

}  // namespace h2o::kernels
