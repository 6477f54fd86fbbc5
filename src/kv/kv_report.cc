#include "kv/kv_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

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
  const std::string where = c.any_windowed()
                                ? PerLayerKind(c, c.budget, [](int32_t w) { return int64_t{w}; })
                                : fmt::format("{} tokens per layer and KV head", c.budget);
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

}  // namespace h2o
