// PyramidKV's per-layer budgets: Cai et al., "PyramidKV: Dynamic KV Cache
// Compression based on Pyramidal Information Funneling" (2024, arXiv
// 2406.02069). Attention is spread wide in the lower layers and funnels
// onto a few tokens in the upper ones, so the lower layers get more of
// the budget and the upper ones less, at the same total.
//
// --kv h2o:heavy=H,recent=R,pyramid=BETA or snapkv:budget=B,window=W,
// pyramid=BETA (BETA an integer >= 1; absent: every layer keeps the same
// budget). What scales is the part a policy selects, S = H for h2o and
// S = B - W for snapkv; the recent window R (W) stays the same in every
// layer. Over the L global layers (sliding-window layers keep their
// window and are skipped), numbered i = 0 (lowest) .. L - 1, as in
// PyramidKV's arithmetic schedule:
//   top    = max(1, floor(S / BETA))        the highest global layer
//   bottom = 2 * S - top                    the lowest
//   S_i    = floor((bottom * (L - 1 - i) + top * i) / (L - 1))   (S when L = 1)
// then the tokens the floors lost (fewer than L) go one each to the lowest
// layers, so sum S_i = L * S exactly: the same K/V memory as without the
// pyramid. BETA = 1 is flat; PyramidKV's experiments use 20. Each layer
// keeps S_i + R (S_i + W) tokens, at least 1 (S_i >= 1 whenever S >= 1).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_spec.h"

namespace h2o {

// The tokens each of n_layer layers keeps under `plan` (a resolved h2o or
// snapkv plan with plan.pyramid >= 1): entry l is the global layer's budget
// (selected + recent), 0 for a sliding-window layer (layer_window[l] > 0;
// layer_window empty: none). Empty when plan.pyramid == 0 (every global
// layer keeps plan.budget); otherwise requires n_layer >= 1. Pure.
std::vector<int32_t> PyramidLayerBudgets(const KvPlan& plan, int32_t n_layer,
                                         std::span<const int32_t> layer_window = {});

}  // namespace h2o
