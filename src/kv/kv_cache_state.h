// A cache's tokens taken out of it, compact: per (layer, KV head) only the
// slots it holds (K/V rows at their types, positions, scores, step
// attention), and the policy's own state. What a prompt cache keeps for a
// finished request: it costs what the cache held, not what it allocated,
// so a state evicted to 20% of a context keeps in a fifth of the memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kv/kv_policy.h"
#include "kv/kv_types.h"

namespace h2o {

struct KvCacheState {
  // The saver's budget per layer and window per layer (0: global), which a
  // cache restoring the state must match (KvCache::CanLoadState).
  std::vector<int32_t> layer_budget;
  std::vector<int32_t> layer_window;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  KvTypes types;
  std::unique_ptr<EvictionPolicy> policy;  // holds the saver's policy state
  std::vector<int32_t> used;               // [n_layer][n_head_kv]: slots held
  std::vector<int32_t> newest_pos;         // [n_layer][n_head_kv]
  std::vector<uint8_t> k, v;               // the held rows, head after head
  std::vector<int32_t> pos;                // their positions, in slot order
  std::vector<double> scores;              // empty unless the policy scores
  std::vector<float> step_attention;       // empty unless it ranks by the last step

  // What the state holds in memory (its vectors' sizes, not capacities).
  size_t Bytes() const;
};

}  // namespace h2o
