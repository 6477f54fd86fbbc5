// Multiple-choice scoring, the lm-eval-harness way: each choice is scored by
// the summed negative log-likelihood of its tokens after BOS + context + " "
// (acc: lowest sum wins; acc_norm: lowest sum per choice token), processing
// tokens as the session's --chunk and --kv say. The task format is one JSON
// object per line: {"context": str, "choices": [str, ...], "gold": index}.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/jsonl.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

struct ChoiceItem {
  std::string context;
  std::vector<std::string> choices;
  int32_t gold = 0;
};

// Errors (naming file:line): missing or mistyped fields, no choices, an
// empty choice, gold outside [0, choices).
Result<ChoiceItem> ParseChoiceItem(const JsonlLine& line);

// items[index].context preceded by `shots` solved examples: the items after
// `index` (wrapping around), each written "context gold-choice", separated
// by blank lines. Deterministic, and never shows an item its own answer.
// Requires shots < items.size().
std::string FewShotContext(std::span<const ChoiceItem> items, size_t index, int32_t shots);

// An item as token sequences: sequences[c] is the tokenization of BOS +
// context + " " + choices[c]; its tokens from choice_begin[c] on are the
// choice's (those not shared with the tokenization of BOS + context), and
// all sequences begin with the same `shared` tokens (the prompt).
struct ChoiceTokens {
  std::vector<std::vector<int32_t>> sequences;
  std::vector<size_t> choice_begin;
  size_t shared = 0;
  int64_t dropped = 0;  // context tokens cut after BOS so the longest fits
};

// Tokenizes an item; when the longest sequence exceeds max_len tokens, the
// oldest context tokens after BOS are dropped from every sequence (as
// lm-eval-harness truncates from the left). Errors: a choice with no
// tokens, or a choice too long to fit max_len with BOS.
Result<ChoiceTokens> TokenizeChoices(const Tokenizer& tokenizer, const std::string& context,
                                     std::span<const std::string> choices, int64_t max_len);

struct ChoiceScores {
  std::vector<double> nll_sum;    // per choice, nats
  std::vector<int64_t> n_tokens;  // per choice
  // Lowest nll_sum / lowest nll_sum per token; the first choice on ties.
  size_t Best() const;
  size_t BestPerToken() const;
};

// Scores the choices of items with one session: the shared prompt runs
// once per item, and every choice continues from a restored copy of the
// state after it (Session::Save/Restore), which gives exactly what running
// BOS + context + choice afresh gives.
class ChoiceScorer {
 public:
  explicit ChoiceScorer(Session& session) : session_(session) {}
  // Resets the session first. Errors: those of Session::Eval.
  Result<ChoiceScores> Score(const ChoiceTokens& tokens);

 private:
  Session& session_;
  SessionSnapshot snapshot_;
  std::vector<float> prompt_logits_;  // the logits after the shared prompt
};

// acc and acc_norm over items, with their standard errors.
struct ChoiceAccuracy {
  int64_t n = 0, correct = 0, correct_norm = 0;
  void Add(const ChoiceScores& scores, int32_t gold);
  double acc() const { return n > 0 ? static_cast<double>(correct) / n : 0.0; }
  double acc_norm() const { return n > 0 ? static_cast<double>(correct_norm) / n : 0.0; }
};

// Standard error of the mean of n 0/1 outcomes whose mean is p, with the
// sample (n - 1) variance as lm-eval-harness reports it: sqrt(p (1 - p) /
// (n - 1)); 0 when n < 2.
double ProportionStdErr(double p, int64_t n);

}  // namespace h2o
