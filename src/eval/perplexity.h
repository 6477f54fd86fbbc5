// Per-token log-likelihood of token streams: the quantity reference_nll.json
// holds and `h2o perplexity` reports.
#pragma once

#include <cstdint>
#include <span>

#include "core/status.h"
#include "runtime/session.h"

namespace h2o {

struct NllResult {
  int64_t tokens = 0;    // predicted tokens: stream length - 1
  double nll_sum = 0.0;  // sum of -log p(next token), nats
  double mean() const { return tokens > 0 ? nll_sum / tokens : 0.0; }
  double perplexity() const;
};

// Resets the session, then feeds the stream in chunks of the session's
// max_chunk and sums -log softmax(logits)[next] over every next token.
// Errors: a stream shorter than 2 tokens, or any Session::Eval error.
Result<NllResult> ScoreStream(Session& session, std::span<const int32_t> ids);

// -log softmax(logits)[target], computed in double precision.
double NegLogSoftmax(std::span<const float> logits, int32_t target);

}  // namespace h2o
