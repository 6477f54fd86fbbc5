// ROUGE-1, ROUGE-2 and ROUGE-L F1 (Lin 2004) as Google's `rouge_score`
// package computes them with stemming off, so summarization scores compare
// with the numbers papers (H2O included) report from that package.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace h2o {

// rouge_score's tokenizer: lowercase, every character outside [a-z0-9]
// (punctuation, and any non-ASCII byte) becomes a space, split on
// whitespace. "Don't stop!" -> {"don", "t", "stop"}. One known difference:
// Python's lower() maps a few non-ASCII capitals to ASCII letters (the
// Kelvin sign to 'k'); here every non-ASCII byte becomes a space.
std::vector<std::string> RougeTokens(std::string_view text);

struct RougeF1 {
  double rouge1 = 0, rouge2 = 0, rougeL = 0;
};

// F1 of each measure, in [0, 1]:
//  - ROUGE-N: overlap = sum over n-grams of min(count in candidate, count
//    in reference); precision = overlap / candidate n-grams, recall =
//    overlap / reference n-grams.
//  - ROUGE-L: sentence-level (the whole text as one sequence, not the
//    summary-level Lsum): precision = LCS / candidate tokens, recall =
//    LCS / reference tokens.
// F1 = 2PR / (P + R), 0 when P + R = 0. An empty candidate or reference
// (no tokens) scores 0 on every measure. Symmetric in its arguments.
// Time O(len_c * len_r) for the LCS. Pure; safe from any thread.
RougeF1 Rouge(std::string_view candidate, std::string_view reference);

}  // namespace h2o
