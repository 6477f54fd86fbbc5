// Per-token log-likelihood of token streams: the quantity reference_nll.json
// holds and `h2o perplexity` reports; and, for KV policies, how far each
// policy's next-token distribution moves from the full cache's (KL
// divergence, top-1 agreement).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/status.h"
#include "runtime/engine.h"
#include "runtime/log_softmax.h"
#include "runtime/session.h"

namespace h2o {

struct NllResult {
  int64_t tokens = 0;       // scored predictions
  double nll_sum = 0.0;     // sum of -log p(next token), nats
  double nll_sq_sum = 0.0;  // sum of its squares (for the standard error)
  double mean() const { return tokens > 0 ? nll_sum / tokens : 0.0; }
  double perplexity() const;
  // llama-perplexity's "+/-": the standard error of the mean NLL times the
  // perplexity, sqrt((mean(nll^2) - mean^2) / (tokens - 1)) * ppl; 0 with
  // fewer than 2 tokens.
  double perplexity_error() const;
  void Add(const NllResult& other);
};

// Resets the session, then feeds the stream in chunks of the session's
// max_chunk and sums -log softmax(logits)[next] over every next token.
// Errors: a stream shorter than 2 tokens, or any Session::Eval error.
Result<NllResult> ScoreStream(Session& session, std::span<const int32_t> ids);

struct ScoreOptions {
  // Predictions before this index are fed but not scored (prediction t is
  // of ids[t + 1]). The windowed mode scores from the middle of the window.
  int64_t first_scored = 0;
  bool keep_token_nll = false;  // fill StreamScore::token_nll
  // Called after each chunk with the number of tokens just fed (to every
  // session), e.g. to advance a progress bar.
  std::function<void(int64_t)> on_chunk;
};

// What one session scored on one stream.
struct StreamScore {
  NllResult nll;
  // Over the scored predictions, against the reference session: the sum of
  // KL(reference || this) in nats, and how many argmaxes agree (ties go to
  // the lowest id). Zero without a reference.
  double kl_sum = 0.0;
  int64_t top1_agree = 0;
  std::vector<double> token_nll;  // per scored prediction, in order, when asked
};

// Scores `ids` with every sequence in lockstep, all on one engine: each
// chunk (the sequences' common max_chunk) is one batch of every sequence,
// so the weights are read once per chunk for all of them, and each token's
// reference distribution is compared with every sequence's right away, so
// no distributions are ever stored (a 32000-token vocabulary over a long
// stream would not fit). `reference` may be null (no comparison) or one of
// `sequences` (then fed once; it agrees with itself exactly). Every
// sequence is reset first. Returns one score per entry of `sequences`.
// Errors: fewer than 2 tokens, nothing left to score after first_scored,
// sequences with different max_chunk, a batch larger than the engine's,
// or any Engine::Forward error.
Result<std::vector<StreamScore>> ScoreStreamLockstep(Engine& engine,
                                                     std::span<Sequence* const> sequences,
                                                     Sequence* reference,
                                                     std::span<const int32_t> ids,
                                                     const ScoreOptions& options = {});

// llama-perplexity's windows: consecutive n_ctx-token slices of `ids`
// (a shorter tail is dropped), each with its first token replaced by `bos`
// (unless bos < 0, for vocabularies that add no BOS). Score each from
// WindowFirstScored(n_ctx): the second half of its predictions. Requires
// n_ctx >= 1.
std::vector<std::vector<int32_t>> SplitWindows(std::span<const int32_t> ids, int32_t n_ctx,
                                               int32_t bos);
inline int64_t WindowFirstScored(int32_t n_ctx) { return n_ctx / 2; }

}  // namespace h2o
