// What a KV cache's memory is made of, in the words the `h2o` commands
// print. A cache without sliding-window layers reads as it always has;
// one with them names both kinds of layer, so that a byte count can be
// checked by hand.
#pragma once

#include <cstdint>
#include <string>

#include "kv/kv_cache.h"

namespace h2o {

// Where a cache of config `c` keeps its K/V rows:
//   no windows:   "16 tokens per layer and KV head[, 1 more shared by the
//                 layers for a chunk]"
//   with windows: "16 tokens per KV head in each of 4 global layers and 512
//                 in each of 20 sliding-window layers[, 64 more shared by
//                 the layers for a chunk]"
std::string DescribeKvSlots(const KvCacheConfig& c);

// What KvCache::FullCacheBytes counts for n_tokens tokens of a model with
// c's layers: "" without windows, else "an exact cache: 4096 tokens per KV
// head in each of 4 global layers and 512 in each of 20 sliding-window
// layers" (a sliding-window layer at min(n_tokens, W), all it ever attends
// to; llama.cpp, without swa_full, allocates W plus a micro-batch there).
std::string DescribeFullKv(const KvCacheConfig& c, int64_t n_tokens);

}  // namespace h2o
