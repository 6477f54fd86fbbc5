// Which cache slots an attention call reads, shared by the one-query
// (attention.cc) and the query-block (attention_chunk.cc) drivers so that
// both see exactly the same runs. Generic C++: not for the AVX2 files.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/attention.h"

namespace h2o::kernels {

// The oldest position a query at query_pos sees: 0 for a global layer, the
// window's first position for a sliding one, never below 0 so that empty
// slots (pos < 0) are never seen. 64-bit so that query_pos - window cannot
// wrap.
inline int64_t OldestVisible(int64_t query_pos, int32_t window) {
  return window > 0 ? std::max<int64_t>(0, query_pos - window + 1) : 0;
}

// Calls fn(begin, end) for each maximal run of slots whose positions lie in
// [oldest, newest] and whose rows are contiguous (runs break at n_home).
// Decode sees one or two runs (the filled slots); a prefill chunk splits
// them where its later tokens sit, and a window where its oldest tokens
// are still cached.
template <typename Fn>
void ForEachRunInPositions(const KvSlots& kv, int64_t oldest, int64_t newest, Fn fn) {
  auto inside = [&](int32_t s) { return kv.pos[s] >= oldest && kv.pos[s] <= newest; };
  int32_t s = 0;
  while (s < kv.n_slots) {
    while (s < kv.n_slots && !inside(s)) ++s;
    const int32_t begin = s;
    const int32_t limit = begin < kv.n_home ? std::min(kv.n_slots, kv.n_home) : kv.n_slots;
    while (s < limit && inside(s)) ++s;
    if (begin < s) fn(begin, s);
  }
}

// score_accum[i] and step[i] (either may be null) += sum[i] for i in
// [0, n): one query's group sums entering the scores, the same update in
// both drivers.
inline void AddGroupSums(const float* sum, int32_t n, double* score_accum, float* step) {
  if (score_accum != nullptr) {
    for (int32_t i = 0; i < n; ++i) score_accum[i] += sum[i];
  }
  if (step != nullptr) {
    for (int32_t i = 0; i < n; ++i) step[i] += sum[i];
  }
}

}  // namespace h2o::kernels
