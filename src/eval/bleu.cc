#include "eval/bleu.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "eval/ngram_counts.h"
#include "eval/rouge.h"

namespace h2o {
namespace {

constexpr int kMaxOrder = 4;
constexpr double kSmoothingEpsilon = 0.1;  // Chen & Cherry method 1, NLTK's default

// The reference length closest to the candidate's; the shorter on a tie.
size_t ClosestReferenceLength(size_t candidate_len,
                              const std::vector<std::vector<std::string>>& references) {
  const auto distance = [candidate_len](size_t len) {
    return len > candidate_len ? len - candidate_len : candidate_len - len;
  };
  size_t best = references.front().size();
  for (const auto& ref : references) {
    if (distance(ref.size()) < distance(best) ||
        (distance(ref.size()) == distance(best) && ref.size() < best)) {
      best = ref.size();
    }
  }
  return best;
}

// Matches of each candidate n-gram, clipped to its largest count in any one
// reference (Papineni's "modified" count).
int64_t ClippedMatches(const NgramCounts& candidate, const std::vector<NgramCounts>& references) {
  int64_t matches = 0;
  for (const auto& [ngram, count] : candidate) {
    int64_t max_ref = 0;
    for (const NgramCounts& ref : references) {
      const auto it = ref.find(ngram);
      if (it != ref.end()) max_ref = std::max(max_ref, it->second);
    }
    matches += std::min(count, max_ref);
  }
  return matches;
}

}  // namespace

double SentenceBleu(std::string_view candidate, std::span<const std::string> references) {
  if (references.empty()) return 0.0;
  const std::vector<std::string> cand = RougeTokens(candidate);
  std::vector<std::vector<std::string>> refs;
  refs.reserve(references.size());
  for (const std::string& r : references) refs.push_back(RougeTokens(r));

  std::array<double, kMaxOrder> precision{};
  for (int n = 1; n <= kMaxOrder; ++n) {
    const NgramCounts cand_counts = CountNgrams(cand, n);
    std::vector<NgramCounts> ref_counts;
    ref_counts.reserve(refs.size());
    for (const auto& r : refs) ref_counts.push_back(CountNgrams(r, n));
    const int64_t matches = ClippedMatches(cand_counts, ref_counts);
    if (n == 1 && matches == 0) return 0.0;
    const double denominator = static_cast<double>(std::max<int64_t>(TotalCount(cand_counts), 1));
    precision[n - 1] =
        (matches > 0 ? static_cast<double>(matches) : kSmoothingEpsilon) / denominator;
  }
  double log_sum = 0.0;
  for (const double p : precision) log_sum += std::log(p);

  const size_t c = cand.size();  // > 0: a unigram matched
  const size_t r = ClosestReferenceLength(c, refs);
  const double brevity_penalty =
      c > r ? 1.0 : std::exp(1.0 - static_cast<double>(r) / static_cast<double>(c));
  return brevity_penalty * std::exp(log_sum / kMaxOrder);
}

double SelfBleu(std::span<const std::string> texts) {
  if (texts.size() < 2) return 0.0;
  double sum = 0.0;
  std::vector<std::string> others;
  others.reserve(texts.size() - 1);
  for (size_t i = 0; i < texts.size(); ++i) {
    others.clear();
    for (size_t j = 0; j < texts.size(); ++j) {
      if (j != i) others.push_back(texts[j]);
    }
    sum += SentenceBleu(texts[i], others);
  }
  return sum / static_cast<double>(texts.size());
}

}  // namespace h2o
