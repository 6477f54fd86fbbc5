// Summarization items in the H2O repository's format (its
// xsum_*shot.jsonl): {"article", "summary_gt", "max_tokens", "temperature",
// "top_p", "stop", ...}, the article ending with its "Summary:" cue. Each is
// answered by generating from BOS + article (runtime/generate.h) and scored
// with ROUGE against summary_gt and against the full-cache output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/jsonl.h"
#include "eval/rouge.h"
#include "runtime/generate.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

struct SummaryItem {
  std::string article;
  std::string summary_gt;
  GenerateOptions generation;  // max_tokens, stop, temperature, top_p (top_k off)
};

// Defaults for absent fields: max_tokens 64, temperature 0 (greedy), top_p
// 1, no stop strings. Errors (naming file:line): missing or mistyped
// fields, max_tokens < 1, temperature < 0, top_p outside (0, 1].
Result<SummaryItem> ParseSummaryItem(const JsonlLine& line);

// BOS + the article's tokens; when that and max_tokens do not fit n_ctx,
// the oldest article tokens after BOS are dropped (the cue at the end
// stays). Errors: max_tokens leaves no room for BOS and one article token.
struct SummaryPrompt {
  std::vector<int32_t> ids;
  int64_t dropped = 0;
};
Result<SummaryPrompt> MakeSummaryPrompt(const Tokenizer& tokenizer, const std::string& article,
                                        int32_t max_tokens, int64_t n_ctx);

// Running mean of ROUGE F1 scores.
struct RougeMean {
  RougeF1 sum;
  int64_t n = 0;
  void Add(const RougeF1& f);
  RougeF1 Mean() const;
};

}  // namespace h2o
