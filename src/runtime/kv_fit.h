// Refuses, before allocating, a KV cache this machine could never hold: a
// context length mistyped or taken from a model's 1M-token metadata would
// otherwise be killed by the OOM killer part way through a run, or wrap a
// size computation around.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "kv/kv_cache.h"
#include "kv/kv_policy.h"

namespace h2o {

// Physical memory plus swap (/proc/meminfo's MemTotal + SwapTotal; sysconf's
// physical pages where there is no /proc); 0 when neither can be read.
uint64_t MachineMemoryBytes();

// Error when a cache of `config` under `policy` would need more than
// `memory_bytes` (0: unknown, not checked) or more than a size_t can count.
// Compared with what the machine has, not with what is free now: K/V rows
// are only touched as tokens arrive, so a long context that a run never
// fills costs nothing, and free memory changes while it runs.
Status CheckKvCacheFits(const KvCacheConfig& config, const EvictionPolicy& policy,
                        uint64_t memory_bytes);

}  // namespace h2o
