#include "runtime/kv_config.h"

#include <algorithm>
#include <limits>

#include "core/status.h"
#include "kv/policy_registry.h"
#include "kv/pyramid.h"

namespace h2o {

KvCacheConfig SessionKvConfig(const HParams& hp, const KvPlan& plan, int32_t n_ctx,
                              int32_t max_chunk, bool pos_shift, const KvTypes& types) {
  H2O_CHECK(n_ctx >= 1 && max_chunk >= 1);
  // A chunk is appended before eviction, so a layer holds its budget + a
  // chunk at its peak; without pos-shift it never holds more than n_ctx.
  const int64_t most = pos_shift ? std::numeric_limits<int32_t>::max() : n_ctx;
  auto capped = [most](int64_t n) { return static_cast<int32_t>(std::min(n, most)); };
  KvCacheConfig c;
  c.n_layer = hp.n_layer;
  c.n_head_kv = hp.n_head_kv;
  c.head_dim = hp.head_dim;
  c.types = types;
  if (!PolicyEvicts(plan.policy)) {
    c.budget = n_ctx;
    c.capacity = n_ctx;
  } else {
    H2O_CHECK(plan.budget >= 1 && plan.keep >= 0);
    // Pinned tokens come on top of the policy's budget.
    const int64_t budget = static_cast<int64_t>(plan.budget) + plan.keep;
    c.capacity = capped(budget + max_chunk);
    c.budget = static_cast<int32_t>(std::min<int64_t>(budget, c.capacity));
    c.n_keep = std::min(plan.keep, c.budget);
  }
  int32_t smallest_window = 0;
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    if (hp.window(l) <= 0) continue;
    if (c.layer_window.empty()) c.layer_window.assign(hp.n_layer, 0);
    c.layer_window[l] = capped(hp.window(l));
    if (smallest_window == 0 || c.layer_window[l] < smallest_window) {
      smallest_window = c.layer_window[l];
    }
  }
  // One chunk size for all windowed layers, so the smallest window bounds
  // it: a larger window then has a few unused position slots, never rows
  // (the spill rows are sized by the most any layer spills).
  if (smallest_window > 0) {
    c.window_chunk = capped(static_cast<int64_t>(smallest_window) + max_chunk) - smallest_window;
  }
  if (plan.pyramid > 0) {
    // Per-layer budgets (kv/pyramid.h), each capped like the plan's, with
    // the same slots beyond each for a chunk: enough for the layer with the
    // least budget to hold min(n_ctx, its budget + chunk), so every layer can.
    c.layer_budgets = PyramidLayerBudgets(plan, hp.n_layer, c.layer_window);
    int64_t least = c.budget, largest = c.budget;
    for (int32_t l = 0; l < hp.n_layer; ++l) {
      if (c.windowed(l)) continue;
      c.layer_budgets[l] = capped(static_cast<int64_t>(c.layer_budgets[l]) + plan.keep);
      least = std::min<int64_t>(least, c.layer_budgets[l]);
      largest = std::max<int64_t>(largest, c.layer_budgets[l]);
    }
    const int64_t extra = std::min({int64_t{max_chunk}, most - least,
                                    int64_t{std::numeric_limits<int32_t>::max()} - largest});
    c.capacity = static_cast<int32_t>(c.budget + extra);
  }
  return c;
}

}  // namespace h2o
