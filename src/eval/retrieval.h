// Long-context retrieval items (`h2o mktask ruler`'s JSONL) as `h2o eval`
// runs them: {"task", "context", "question", "outputs", "max_tokens",
// "length", "depth"}; the prompt is the context then the question, and a
// greedy answer scores the share of `outputs` it contains (RULER's
// string_match_all).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/jsonl.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

struct RetrievalItem {
  std::string task;  // "niah_single_1"; "" when the line names none
  int64_t length = 0;  // the length it was made for ("length"; else its prompt + answer)
  double depth = -1;   // the needle's depth in percent; -1: none or unknown
  int32_t max_tokens = 0;
  std::vector<std::string> outputs;
  std::vector<int32_t> ids;   // BOS, the context's tokens, then the question's
  size_t context_tokens = 0;  // ids[0, context_tokens) are the context's
};

// Errors (naming file:line): missing or mistyped fields, no outputs,
// max_tokens outside [1, 4096]. The context and question are tokenized
// together (their boundary may merge into one token: then the context
// ends where the two tokenizations part).
Result<RetrievalItem> ParseRetrievalItem(const JsonlLine& line, const Tokenizer& tokenizer);

}  // namespace h2o
