// Multiple-choice scoring, the lm-eval-harness way: each choice is scored by
// the summed negative log-likelihood of its tokens after BOS + context + " "
// (acc: lowest sum wins; acc_norm: lowest sum per choice token), processing
// tokens as the sequences' --chunk and --kv say. The task format is one JSON
// object per line: {"context": str, "choices": [str, ...], "gold": index}.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "eval/jsonl.h"
#include "runtime/engine.h"
#include "runtime/sequence.h"
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

// Scores the choices of items under several sequences (one per KV policy)
// in lockstep on one engine: the shared prompt runs once per item, a chunk
// of every sequence per forward pass, and every choice continues from a
// restored copy of each sequence's state after it (Sequence::Save/Restore),
// again all sequences together. Each sequence's scores are exactly what
// running BOS + context + choice afresh on it alone gives (the engine's
// batch parity: bit for bit with integer-dot weights such as q8_0).
class ChoiceScorer {
 public:
  explicit ChoiceScorer(Engine& engine) : engine_(engine) {}
  // Resets the sequences first; they must share max_chunk. Returns one
  // ChoiceScores per sequence, in order. Errors: those of FeedLockstep.
  Result<std::vector<ChoiceScores>> Score(std::span<Sequence* const> sequences,
                                          const ChoiceTokens& tokens);

 private:
  Engine& engine_;
  std::vector<SequenceSnapshot> snapshots_;        // per sequence
  std::vector<std::vector<float>> prompt_logits_;  // per sequence, after the shared prompt
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
