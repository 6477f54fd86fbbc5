#include "model/attention.h"

#include <cmath>
#include <limits>

#include "kernels/fp16.h"

namespace h2o {
namespace {

inline float LoadElement(const void* base, TensorType type, int64_t i) {
  if (type == TensorType::kF32) return static_cast<const float*>(base)[i];
  return kernels::F16ToF32(static_cast<const uint16_t*>(base)[i]);
}

}  // namespace

void AttendQuery(const float* q, const KvHeadView& kv, int32_t query_pos, float scale,
                 const AttentionOutputs& o) {
  const int32_t d = kv.head_dim;
  float max_logit = -std::numeric_limits<float>::infinity();
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    const int32_t pos = kv.pos[s];
    if (pos < 0 || pos > query_pos) {
      o.probs[s] = -std::numeric_limits<float>::infinity();
      continue;
    }
    const int64_t row = static_cast<int64_t>(s) * d;
    float dot = 0.0f;
    for (int32_t i = 0; i < d; ++i) dot += q[i] * LoadElement(kv.k, kv.k_type, row + i);
    o.probs[s] = dot * scale;
    if (o.probs[s] > max_logit) max_logit = o.probs[s];
  }
  float sum = 0.0f;
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    const float e = std::isinf(o.probs[s]) ? 0.0f : std::exp(o.probs[s] - max_logit);
    o.probs[s] = e;
    sum += e;
  }
  const float inv_sum = 1.0f / sum;
  for (int32_t i = 0; i < d; ++i) o.out[i] = 0.0f;
  for (int32_t s = 0; s < kv.n_slots; ++s) {
    const float p = o.probs[s] * inv_sum;
    o.probs[s] = p;
    if (p == 0.0f) continue;
    const int64_t row = static_cast<int64_t>(s) * d;
    for (int32_t i = 0; i < d; ++i) o.out[i] += p * LoadElement(kv.v, kv.v_type, row + i);
    if (o.score_accum != nullptr) o.score_accum[s] += p;
    if (o.step_attention != nullptr) o.step_attention[s] += p;
  }
}

}  // namespace h2o
