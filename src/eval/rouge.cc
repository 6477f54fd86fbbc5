#include "eval/rouge.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include "eval/ngram_counts.h"

namespace h2o {
namespace {

double F1(double precision, double recall) {
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

double RougeN(std::span<const std::string> candidate, std::span<const std::string> reference,
              int n) {
  const NgramCounts c = CountNgrams(candidate, n);
  const NgramCounts r = CountNgrams(reference, n);
  const double overlap = static_cast<double>(ClippedOverlap(c, r));
  // rouge_score divides by max(total, 1), so a text shorter than n scores 0.
  const double precision = overlap / static_cast<double>(std::max<int64_t>(TotalCount(c), 1));
  const double recall = overlap / static_cast<double>(std::max<int64_t>(TotalCount(r), 1));
  return F1(precision, recall);
}

// Length of the longest common subsequence, with two rows of the usual
// dynamic-programming table.
size_t LcsLength(std::span<const std::string> a, std::span<const std::string> b) {
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> RougeTokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (const char ch : text) {
    char c = ch;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      current.push_back(c);
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

RougeF1 Rouge(std::string_view candidate, std::string_view reference) {
  const std::vector<std::string> c = RougeTokens(candidate);
  const std::vector<std::string> r = RougeTokens(reference);
  RougeF1 f;
  if (c.empty() || r.empty()) return f;
  f.rouge1 = RougeN(c, r, 1);
  f.rouge2 = RougeN(c, r, 2);
  const double lcs = static_cast<double>(LcsLength(c, r));
  f.rougeL = F1(lcs / static_cast<double>(c.size()), lcs / static_cast<double>(r.size()));
  return f;
}

}  // namespace h2o
