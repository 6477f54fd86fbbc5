// Sentence BLEU-4 (Papineni et al. 2002) and Self-BLEU (Zhu et al. 2018,
// Texygen), the diversity measure the summarization eval reports for a set
// of generations: high Self-BLEU means the outputs repeat each other.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace h2o {

// BLEU-4 of one candidate against one or more references, on RougeTokens
// (lowercased alphanumeric runs), as NLTK's
// sentence_bleu(refs, cand, smoothing_function=SmoothingFunction().method1):
//  - p_n (n = 1..4) = clipped n-gram matches / candidate n-grams, where a
//    candidate n-gram's count is clipped to its largest count in any one
//    reference; the denominator is at least 1.
//  - Smoothing: method 1 of Chen & Cherry (2014): a p_n with no matches
//    becomes 0.1 / denominator instead of 0, so a short sentence without a
//    4-gram match still scores above 0. One consequence: a candidate of
//    fewer than 4 tokens scores below 1 even against itself (3 tokens:
//    (1 * 1 * 1 * 0.1)^(1/4) = 0.56).
//  - BLEU = BP * exp(mean_n log p_n), BP = 1 if c > r else exp(1 - r/c),
//    c = candidate length, r = the reference length closest to c (the
//    shorter one on a tie).
// Returns 0 when no unigram matches (so for an empty candidate), or when
// there are no references. In [0, 1]. Pure; safe from any thread.
double SentenceBleu(std::string_view candidate, std::span<const std::string> references);

// Mean over i of SentenceBleu(texts[i], every other text as a reference);
// 0 for fewer than 2 texts. O(n^2) in the number of texts.
double SelfBleu(std::span<const std::string> texts);

}  // namespace h2o
