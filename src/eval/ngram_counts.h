// N-gram multisets of a token sequence: the counting that ROUGE-N and BLEU
// share (both clip a candidate's n-gram counts by a reference's).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>

namespace h2o {

// Keys are the n tokens joined by single spaces; the tokens RougeTokens
// makes contain no spaces, so distinct n-grams get distinct keys.
using NgramCounts = std::unordered_map<std::string, int64_t>;

// Counts of every n-gram (n >= 1) of `tokens`; empty when there are fewer
// than n tokens.
NgramCounts CountNgrams(std::span<const std::string> tokens, int n);

// Sum over all n-grams of min(count in `a`, count in `b`): the clipped
// overlap of the two multisets.
int64_t ClippedOverlap(const NgramCounts& a, const NgramCounts& b);

// Total count of all n-grams in `counts`.
int64_t TotalCount(const NgramCounts& counts);

}  // namespace h2o
