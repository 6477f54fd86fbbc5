// The shape of the KV cache a Session allocates for a model, a policy and a
// context, in one place so that `h2o inspect` estimates exactly what a run
// allocates.
#pragma once

#include <cstdint>

#include "core/tensor_type.h"
#include "kv/kv_cache.h"
#include "kv/kv_spec.h"
#include "model/hparams.h"

namespace h2o {

// The cache for sequences of up to n_ctx positions fed in chunks of up to
// max_chunk tokens (both resolved, >= 1):
//   - global layers: the plan's budget + one chunk (a full plan: n_ctx,
//     nothing spilled);
//   - sliding-window layers (hp.window(l) = W > 0): W + one chunk, whatever
//     the plan.
// Unless pos_shift (positions then pass n_ctx), no layer holds more than
// n_ctx tokens, so every budget, window and capacity is capped at n_ctx.
// Requires a plan from ResolveKvSpec with budget >= 1 unless full.
KvCacheConfig SessionKvConfig(const HParams& hp, const KvPlan& plan, int32_t n_ctx,
                              int32_t max_chunk, bool pos_shift, const KvTypes& types);

}  // namespace h2o
