#include "eval/ngram_counts.h"

#include <algorithm>

namespace h2o {

NgramCounts CountNgrams(std::span<const std::string> tokens, int n) {
  NgramCounts counts;
  if (n < 1) return counts;
  const size_t width = static_cast<size_t>(n);
  for (size_t start = 0; start + width <= tokens.size(); ++start) {
    std::string key = tokens[start];
    for (size_t k = 1; k < width; ++k) key.append(" ").append(tokens[start + k]);
    ++counts[key];
  }
  return counts;
}

int64_t ClippedOverlap(const NgramCounts& a, const NgramCounts& b) {
  const NgramCounts& smaller = a.size() <= b.size() ? a : b;
  const NgramCounts& larger = a.size() <= b.size() ? b : a;
  int64_t overlap = 0;
  for (const auto& [ngram, count] : smaller) {
    const auto it = larger.find(ngram);
    if (it != larger.end()) overlap += std::min(count, it->second);
  }
  return overlap;
}

int64_t TotalCount(const NgramCounts& counts) {
  int64_t total = 0;
  for (const auto& entry : counts) total += entry.second;
  return total;
}

}  // namespace h2o
