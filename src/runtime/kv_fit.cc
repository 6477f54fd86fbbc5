#include "runtime/kv_fit.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/byte_size.h"
#include "core/tensor_type.h"

namespace h2o {

uint64_t MachineMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  uint64_t total_kib = 0;
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (!(fields >> key >> kib)) continue;
    if (key == "MemTotal:" || key == "SwapTotal:") {
      total_kib += kib;
      found = true;
    }
  }
  if (found) return total_kib * 1024;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * page_size : 0;
}

Status CheckKvCacheFits(const KvCacheConfig& config, const EvictionPolicy& policy,
                        uint64_t memory_bytes) {
  // In long double: the int32 sizes multiply past 2^64 for hostile values,
  // and KvCache's own size_t arithmetic may only run once this has passed.
  const long double heads = config.n_head_kv;
  long double rows = heads * config.spill_slots(), slots = 0;
  for (int32_t l = 0; l < config.n_layer; ++l) {
    rows += heads * config.layer_budget(l);
    slots += heads * config.layer_capacity(l);
  }
  const long double token_bytes = static_cast<long double>(config.types.TokenBytes(config.head_dim));
  // KvCache::BytesFor's bookkeeping: a position per slot, the policy's
  // scores, a freed-slot index per spill slot of each KV head.
  const long double per_slot = 4.0L + (policy.needs_scores() ? 8.0L : 0.0L) +
                               (policy.needs_step_attention() ? 4.0L : 0.0L);
  const long double bytes =
      rows * token_bytes + slots * per_slot + 4.0L * heads * config.spill_slots();
  const std::string what =
      fmt::format("the KV cache ({} layers x {} KV heads x up to {} tokens of {} {} values for K and V)",
                  config.n_layer, config.n_head_kv, config.max_capacity(), config.head_dim,
                  config.types.Name());
  if (bytes > 0x1p62L) {
    return Status::Error(fmt::format("{} needs more than 4 EiB; lower the context size or set a KV budget", what));
  }
  if (memory_bytes > 0 && bytes > static_cast<long double>(memory_bytes)) {
    return Status::Error(fmt::format(
        "{} needs {}, more than this machine's {} of memory and swap; lower the context size or set a "
        "KV budget",
        what, FormatBytes(static_cast<double>(bytes)), FormatBytes(static_cast<double>(memory_bytes))));
  }
  return Status::Ok();
}

}  // namespace h2o
