#include "eval/token_feed.h"

#include <algorithm>

namespace h2o {

Status FeedTokens(Session& session, std::span<const int32_t> ids, const LogitsVisitor& visit) {
  const size_t n_vocab = session.model().hparams().n_vocab;
  const size_t chunk = static_cast<size_t>(session.max_chunk());
  for (size_t begin = 0; begin < ids.size(); begin += chunk) {
    const size_t len = std::min(chunk, ids.size() - begin);
    H2O_RETURN_IF_ERROR(session.Eval(ids.subspan(begin, len), LogitsFor::kAllTokens));
    const std::span<const float> logits = session.logits();
    for (size_t t = 0; t < len; ++t) visit(begin + t, logits.subspan(t * n_vocab, n_vocab));
  }
  return Status::Ok();
}

}  // namespace h2o
