#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>

namespace h2o {

double NllResult::perplexity() const { return std::exp(mean()); }

double NegLogSoftmax(std::span<const float> logits, int32_t target) {
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max_logit);
  return max_logit + std::log(sum) - static_cast<double>(logits[target]);
}

Result<NllResult> ScoreStream(Session& session, std::span<const int32_t> ids) {
  if (ids.size() < 2) return Status::Error("a stream needs at least 2 tokens to score");
  session.Reset();
  const size_t n_vocab = session.model().hparams().n_vocab;
  const size_t chunk = static_cast<size_t>(session.max_chunk());
  NllResult result;
  // The last token is never fed: nothing follows it to predict.
  const size_t n_inputs = ids.size() - 1;
  for (size_t begin = 0; begin < n_inputs; begin += chunk) {
    const size_t len = std::min(chunk, n_inputs - begin);
    H2O_RETURN_IF_ERROR(session.Eval(ids.subspan(begin, len), LogitsFor::kAllTokens));
    const std::span<const float> logits = session.logits();
    for (size_t t = 0; t < len; ++t) {
      result.nll_sum += NegLogSoftmax(logits.subspan(t * n_vocab, n_vocab), ids[begin + t + 1]);
    }
    result.tokens += static_cast<int64_t>(len);
  }
  return result;
}

}  // namespace h2o
