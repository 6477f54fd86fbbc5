// What a (layer, head) of a KvCache holds, for tests that compare it with
// an expectation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kv/kv_cache.h"

namespace h2o::testing {

// The positions present in (l, h), ascending.
inline std::vector<int32_t> KeptPositions(const KvCache& cache, int32_t l, int32_t h) {
  const KvHeadView view = cache.View(l, h);
  std::vector<int32_t> kept;
  for (int32_t s = 0; s < view.n_slots; ++s) {
    if (view.pos[s] >= 0) kept.push_back(view.pos[s]);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace h2o::testing
