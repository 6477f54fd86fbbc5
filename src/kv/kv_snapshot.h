// A copy of what a KvCache keeps, detached from it: positions and scores
// per layer and KV head. It outlives the cache and may be read by another
// thread while the cache moves on (the server's /v1/kv, --kv-dump).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kv/kv_cache.h"

namespace h2o {

struct KvSnapshot {
  struct Head {
    std::vector<int32_t> positions;  // ascending
    std::vector<double> scores;      // one per position; 0 when the policy tracks none
  };
  std::string policy;
  int32_t budget = 0;
  int32_t capacity = 0;
  bool scores_tracked = false;
  int32_t n_layer = 0;
  int32_t n_head_kv = 0;
  std::vector<int32_t> layer_window;  // as KvCacheConfig::layer_window (empty: all global)
  std::vector<Head> heads;            // layer-major: heads[layer * n_head_kv + head]

  const Head& head(int32_t layer, int32_t g) const { return heads[layer * n_head_kv + g]; }
  bool windowed(int32_t layer) const {
    return !layer_window.empty() && layer_window[layer] > 0;
  }
  // Heap bytes held, for bounding how many snapshots are kept.
  size_t MemoryBytes() const;
};

KvSnapshot TakeKvSnapshot(const KvCache& cache);

}  // namespace h2o
