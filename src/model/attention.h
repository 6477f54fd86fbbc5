// Attention of one query head over the slots of its KV head.
#pragma once

#include <cstdint>

#include "kv/kv_cache.h"

namespace h2o {

struct AttentionOutputs {
  float* out = nullptr;            // [head_dim] result (overwritten)
  float* probs = nullptr;          // [kv.n_slots] scratch: softmax per slot
  double* score_accum = nullptr;   // [kv.n_slots] or null: += probs (H2O scores)
  float* step_attention = nullptr; // [kv.n_slots] or null: += probs (TOVA)
};

// Causal softmax attention of q (head_dim floats, RoPE applied) over the
// slots of `kv` whose position is in [0, query_pos]; empty and future slots
// get probability 0 and add nothing to the scores.
void AttendQuery(const float* q, const KvHeadView& kv, int32_t query_pos, float scale,
                 const AttentionOutputs& outputs);

}  // namespace h2o
