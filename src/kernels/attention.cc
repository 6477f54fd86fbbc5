#include "kernels/attention.h"

#include <cmath>
#include <limits>

#include "core/status.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {

void AttendGroup(const float* q, int32_t n_group, const KvSlots& kv, int32_t query_pos, float scale,
                 const GroupAttentionOutputs& o) {
  const KernelTable& kt = ActiveKernels();
  const int32_t d = kv.head_dim;
  const int32_t n = kv.n_slots;
  const DequantizeRowFn load_k = kt.For(kv.k_type).dequantize_row;
  const DequantizeRowFn load_v = kt.For(kv.v_type).dequantize_row;
  const DotRowFn dot = kt.f32.dot_row;
  const size_t k_row_bytes = RowBytes(kv.k_type, d);
  const size_t v_row_bytes = RowBytes(kv.v_type, d);
  constexpr float kMasked = -std::numeric_limits<float>::infinity();

  // Pass over K: logits of every query head of the group.
  for (int32_t s = 0; s < n; ++s) {
    const int32_t pos = kv.pos[s];
    if (pos < 0 || pos > query_pos) {
      for (int32_t h = 0; h < n_group; ++h) o.probs[static_cast<size_t>(h) * n + s] = kMasked;
      continue;
    }
    load_k(static_cast<const uint8_t*>(kv.k) + s * k_row_bytes, o.row, d);
    for (int32_t h = 0; h < n_group; ++h) {
      o.probs[static_cast<size_t>(h) * n + s] = dot(o.row, q + static_cast<size_t>(h) * d, d) * scale;
    }
  }
  for (int32_t h = 0; h < n_group; ++h) {
    float* p = o.probs + static_cast<size_t>(h) * n;
    kt.softmax(p, n);  // masked (-inf) entries become exactly 0
    float* out = o.out + static_cast<size_t>(h) * d;
    for (int32_t i = 0; i < d; ++i) out[i] = 0.0f;
  }
  // Pass over V: outputs, and the scores from the same probabilities.
  for (int32_t s = 0; s < n; ++s) {
    if (kv.pos[s] < 0 || kv.pos[s] > query_pos) continue;
    load_v(static_cast<const uint8_t*>(kv.v) + s * v_row_bytes, o.row, d);
    float group_sum = 0.0f;
    for (int32_t h = 0; h < n_group; ++h) {
      const float p = o.probs[static_cast<size_t>(h) * n + s];
      group_sum += p;
      kt.axpy(p, o.row, o.out + static_cast<size_t>(h) * d, d);
    }
    if (o.score_accum != nullptr) o.score_accum[s] += group_sum;
    if (o.step_attention != nullptr) o.step_attention[s] += group_sum;
  }
}

}  // namespace h2o::kernels
