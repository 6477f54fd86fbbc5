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

// The one KV memory figure every command prints (generate, perplexity,
// inspect, bench): what is allocated, split into K/V rows and bookkeeping
// (each slot's position; the accumulated and step scores of a policy that
// keeps them; the indices of one spill's freed slots), both counted by
// KvCache::AllocatedBytesFor.
struct KvMemory {
  size_t rows = 0;
  size_t bookkeeping = 0;
  bool scores = false;  // whether bookkeeping includes the policy's scores
  size_t total() const { return rows + bookkeeping; }
};

// What a cache of config `c` under `policy` allocates.
KvMemory KvMemoryFor(const KvCacheConfig& c, const EvictionPolicy& policy);

// What a full cache that holds exactly n_tokens tokens of c's model needs,
// counted by the same function as KvMemoryFor with the full policy's
// bookkeeping, so that the two compare like with like: every global layer
// n_tokens slots, a sliding-window layer min(n_tokens, W), no chunk slots
// (its rows are KvCache::FullCacheBytes). Zero for n_tokens <= 0.
KvMemory FullKvMemory(const KvCacheConfig& c, int64_t n_tokens);

// cache / full, on totals (0 when full is empty).
double KvRatio(const KvMemory& cache, const KvMemory& full);

// Why a cache of config `c` needs more than a full cache of n_tokens, or
// "" when it does not: "budget 16 > 3 tokens: a full cache of the same
// tokens is smaller" (also a full policy, whose budget is its context),
// or, with a smaller budget, the scores and chunk slots it adds.
std::string WhyOverFull(const KvCacheConfig& c, int64_t n_tokens, const KvMemory& cache,
                        const KvMemory& full);

// "15.00 KiB (10.12 KiB K/V + 4.88 KiB positions, scores)": the total,
// then its parts (the second names what the bookkeeping holds).
std::string FormatKvMemory(const KvMemory& m);

// The figure's line without its prefix, the same in every command:
// "40.00 KiB allocated (32.00 KiB K/V + 8.00 KiB positions, scores; 16
// tokens per layer and KV head, 1 more shared by the layers for a chunk);
// a full cache of 512 tokens needs 200.00 KiB (160.00 KiB K/V + 40.00 KiB
// positions): 0.20x[; why it is over 1][; an exact cache: ...]".
std::string DescribeKvVsFull(const KvCacheConfig& c, const EvictionPolicy& policy,
                             int64_t n_tokens);

}  // namespace h2o
