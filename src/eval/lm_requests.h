// The scoring requests of the official H2O repository (FMInference/H2O,
// h2o_hf): its lm-eval-harness bridge writes one request per line,
// {"prompt": ..., "echo": true, "logprobs": 1, "max_tokens": 0, ...}, and
// its evaluate_task_result.py reads back, per request, the prompt's tokens
// with the log-probability of each given the ones before it
// ("token_logprobs", the first null) and the most likely token at each
// position ("top_logprobs", the first null), matching each result to its
// request by the request's serialized JSON. Answering these files lets
// lm-eval tasks prepared by that repository run on this engine.
//
// As in the repository's run_lm_eval_harness.py, the prompt is tokenized
// without BOS (the evaluator aligns its own BOS-less tokenization with the
// tokens returned) and tokens are the vocabulary's piece strings (what
// Hugging Face's convert_ids_to_tokens gives), so the evaluator can map
// them back to ids.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "eval/jsonl.h"
#include "runtime/engine.h"
#include "runtime/sequence.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

struct ScoreRequest {
  nlohmann::ordered_json request;  // as read, echoed back in the result
  std::string prompt;
  int32_t top_k = 1;  // "logprobs": alternatives per position (at least 1)
};

// Errors (naming file:line): no string "prompt", or a request that asks
// for generation ("echo" not true, or "max_tokens" other than 0).
Result<ScoreRequest> ParseScoreRequest(const JsonlLine& line);

struct PromptLogprobs {
  std::vector<int32_t> ids;
  // logprob[i] = log p(ids[i] | ids[..i]) for i >= 1; logprob[0] unused.
  std::vector<double> logprob;
  // top[i] for i >= 1: the top_k (id, log-probability) pairs of the
  // distribution that predicts ids[i], most likely first (lowest id on ties).
  std::vector<std::vector<std::pair<int32_t, double>>> top;
};

// Resets the sequence and feeds the ids (chunked and evicting as the
// sequence says). Errors: empty ids, or those of Engine::Forward.
Result<PromptLogprobs> ScorePrompt(Engine& engine, Sequence& sequence,
                                   std::span<const int32_t> ids, int32_t top_k);

// The result line the repository's evaluator reads:
// {"request": <request>, "result": {"choices": [{"text": prompt,
//  "logprobs": {"tokens", "token_logprobs", "top_logprobs", "text_offset"},
//  "finish_reason": "length"}], "request_time": {"batch_time": seconds,
//  "batch_size": 1}}}. text_offset holds each token's byte offset in the
// prompt.
nlohmann::ordered_json ScoreResultLine(const ScoreRequest& request, const PromptLogprobs& scored,
                                       const Tokenizer& tokenizer, double seconds);

}  // namespace h2o
