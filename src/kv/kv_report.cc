#include "kv/kv_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "core/byte_size.h"
#include "core/status.h"

namespace h2o {
namespace {

// "G tokens per KV head in each of 4 global layers and W in each of 20
// sliding-window layers", the windowed layers grouped by their token count
// window_tokens(W), in increasing order.
template <typename WindowTokens>
std::string PerLayerKind(const KvCacheConfig& c, int64_t global_tokens,
                         WindowTokens window_tokens) {
  int32_t n_global = 0;
  std::map<int64_t, int32_t> windowed;  // tokens -> layers
  for (int32_t l = 0; l < c.n_layer; ++l) {
    if (c.windowed(l)) {
      ++windowed[window_tokens(c.layer_window[l])];
    } else {
      ++n_global;
    }
  }
  std::string out;
  const char* unit = " tokens per KV head";
  if (n_global > 0) {
    out = fmt::format("{}{} in each of {} global layer{}", global_tokens, unit, n_global,
                      n_global == 1 ? "" : "s");
    unit = "";
  }
  size_t i = 0;
  for (const auto& [tokens, layers] : windowed) {
    const bool last = ++i == windowed.size();
    out += out.empty() ? "" : (last ? " and " : ", ");
    out += fmt::format("{}{} in each of {}", tokens, unit, layers);
    unit = "";
    if (last) out += fmt::format(" sliding-window layer{}", layers == 1 ? "" : "s");
  }
  return out;
}

}  // namespace

std::string DescribeKvSlots(const KvCacheConfig& c) {
  std::string where = c.any_windowed()
                          ? PerLayerKind(c, c.budget, [](int32_t w) { return int64_t{w}; })
                          : fmt::format("{} tokens per layer and KV head", c.budget);
  if (!c.layer_budgets.empty()) {
    // A pyramid (kv/pyramid.h): the global layers' budgets, lowest layer first.
    std::string budgets;
    for (int32_t l = 0; l < c.n_layer; ++l) {
      if (c.windowed(l)) continue;
      budgets.append(budgets.empty() ? "" : "/").append(std::to_string(c.layer_budgets[l]));
    }
    where += fmt::format(" on average; per global layer, lowest first: {}", budgets);
  }
  const int32_t spill = c.spill_slots();
  if (spill == 0) return where;
  return fmt::format("{}, {} more shared by the layers for a chunk", where, spill);
}

std::string DescribeFullKv(const KvCacheConfig& c, int64_t n_tokens) {
  if (!c.any_windowed()) return "";
  return "an exact cache: " + PerLayerKind(c, n_tokens, [n_tokens](int32_t w) {
           return std::min<int64_t>(n_tokens, w);
         });
}

KvMemory KvMemoryFor(const KvCacheConfig& c, const EvictionPolicy& policy) {
  const size_t all = KvCache::AllocatedBytesFor(c, policy);
  const size_t rows = KvCache::RowBytesFor(c);
  return {rows, all - rows, policy.needs_scores() || policy.needs_step_attention()};
}

KvMemory FullKvMemory(const KvCacheConfig& c, int64_t n_tokens) {
  if (n_tokens <= 0) return {};
  H2O_CHECK(n_tokens <= std::numeric_limits<int32_t>::max());
  KvCacheConfig full = c;
  full.budget = static_cast<int32_t>(n_tokens);
  full.capacity = full.budget;
  full.layer_budgets.clear();  // a full cache holds every token in every global layer
  for (int32_t& w : full.layer_window) {
    if (w > 0) w = std::min(w, full.budget);
  }
  full.window_chunk = 0;
  return KvMemoryFor(full, FullPolicy(full.budget));
}

double KvRatio(const KvMemory& cache, const KvMemory& full) {
  return full.total() > 0 ? static_cast<double>(cache.total()) / full.total() : 0.0;
}

std::string WhyOverFull(const KvCacheConfig& c, int64_t n_tokens, const KvMemory& cache,
                        const KvMemory& full) {
  if (cache.total() <= full.total()) return "";
  if (c.budget >= n_tokens) {
    return fmt::format("budget {} {} {} tokens: a full cache of the same tokens is smaller",
                       c.budget, c.budget == n_tokens ? "=" : ">", n_tokens);
  }
  return fmt::format(
      "budget {} < {} tokens, but its scores and chunk slots cost more than the evicted tokens "
      "save",
      c.budget, n_tokens);
}

std::string FormatKvMemory(const KvMemory& m) {
  return fmt::format("{} ({} K/V + {} positions{})", FormatBytes(static_cast<double>(m.total())),
                     FormatBytes(static_cast<double>(m.rows)),
                     FormatBytes(static_cast<double>(m.bookkeeping)), m.scores ? ", scores" : "");
}

std::string DescribeKvVsFull(const KvCacheConfig& c, const EvictionPolicy& policy,
                             int64_t n_tokens) {
  const KvMemory cache = KvMemoryFor(c, policy);
  const KvMemory full = FullKvMemory(c, n_tokens);
  std::string out = fmt::format("{} allocated", FormatKvMemory(cache));
  // The slots go inside the parentheses of FormatKvMemory.
  out.insert(out.rfind(')'), "; " + DescribeKvSlots(c));
  out += fmt::format("; a full cache of {} tokens needs {}: {:.2f}x", n_tokens,
                     FormatKvMemory(full), KvRatio(cache, full));
  const std::string why = WhyOverFull(c, n_tokens, cache, full);
  if (!why.empty()) out += " (" + why + ")";
  const std::string exact = DescribeFullKv(c, n_tokens);
  if (!exact.empty()) out += "; " + exact;
  return out;
}

}  // namespace h2o
