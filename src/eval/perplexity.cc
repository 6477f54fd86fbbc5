#include "eval/perplexity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "eval/token_feed.h"

namespace h2o {
namespace {

// The first index of the largest logit.
int32_t ArgMax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace

double NllResult::perplexity() const { return std::exp(mean()); }

double NllResult::perplexity_error() const {
  if (tokens < 2) return 0.0;
  const double m = mean();
  const double variance = nll_sq_sum / tokens - m * m;
  return variance > 0 ? std::sqrt(variance / (tokens - 1)) * perplexity() : 0.0;
}

void NllResult::Add(const NllResult& other) {
  tokens += other.tokens;
  nll_sum += other.nll_sum;
  nll_sq_sum += other.nll_sq_sum;
}

Result<NllResult> ScoreStream(Session& session, std::span<const int32_t> ids) {
  Sequence* sequences[] = {&session.sequence()};
  H2O_ASSIGN_OR_RETURN(std::vector<StreamScore> scores,
                       ScoreStreamLockstep(session.engine(), sequences, nullptr, ids));
  return scores[0].nll;
}

Result<std::vector<StreamScore>> ScoreStreamLockstep(Engine& engine,
                                                     std::span<Sequence* const> sequences,
                                                     Sequence* reference,
                                                     std::span<const int32_t> ids,
                                                     const ScoreOptions& options) {
  H2O_CHECK(!sequences.empty());
  if (ids.size() < 2) return Status::Error("a stream needs at least 2 tokens to score");
  // The last token is never fed: nothing follows it to predict.
  const int64_t n_inputs = static_cast<int64_t>(ids.size()) - 1;
  if (options.first_scored >= n_inputs) {
    return Status::Error(fmt::format(
        "nothing to score: the stream has {} tokens and scoring starts at prediction {}",
        ids.size(), options.first_scored));
  }
  std::vector<Sequence*> fed(sequences.begin(), sequences.end());
  if (reference != nullptr && std::find(fed.begin(), fed.end(), reference) == fed.end()) {
    fed.push_back(reference);
  }
  const size_t n_vocab = engine.model().hparams().n_vocab;
  for (Sequence* s : fed) s->Reset();
  std::vector<StreamScore> scores(sequences.size());
  std::vector<double> ref_logp, ref_p, logp;
  auto score_chunk = [&](size_t begin_u, size_t len_u) {
    const int64_t begin = static_cast<int64_t>(begin_u), len = static_cast<int64_t>(len_u);
    if (options.on_chunk) options.on_chunk(len);
    for (int64_t t = std::max<int64_t>(0, options.first_scored - begin); t < len; ++t) {
      const int32_t target = ids[begin + t + 1];
      int32_t ref_top = -1;
      if (reference != nullptr) {
        const auto row = reference->logits().subspan(t * n_vocab, n_vocab);
        LogSoftmax(row, ref_logp);
        ref_p.resize(n_vocab);
        for (size_t v = 0; v < n_vocab; ++v) ref_p[v] = std::exp(ref_logp[v]);
        ref_top = ArgMax(row);
      }
      for (size_t i = 0; i < sequences.size(); ++i) {
        StreamScore& score = scores[i];
        const auto row = sequences[i]->logits().subspan(t * n_vocab, n_vocab);
        double nll;
        if (reference == nullptr) {
          nll = NegLogSoftmax(row, target);
        } else if (sequences[i] == reference) {
          nll = -ref_logp[target];
          ++score.top1_agree;
        } else {
          LogSoftmax(row, logp);
          nll = -logp[target];
          double kl = 0.0;
          for (size_t v = 0; v < n_vocab; ++v) kl += ref_p[v] * (ref_logp[v] - logp[v]);
          score.kl_sum += kl;
          score.top1_agree += ArgMax(row) == ref_top;
        }
        score.nll.tokens += 1;
        score.nll.nll_sum += nll;
        score.nll.nll_sq_sum += nll * nll;
        if (options.keep_token_nll) score.token_nll.push_back(nll);
      }
    }
  };
  H2O_RETURN_IF_ERROR(
      FeedLockstep(engine, fed, ids.first(n_inputs), LogitsFor::kAllTokens, score_chunk));
  return scores;
}

std::vector<std::vector<int32_t>> SplitWindows(std::span<const int32_t> ids, int32_t n_ctx,
                                               int32_t bos) {
  H2O_CHECK(n_ctx >= 1);
  std::vector<std::vector<int32_t>> windows;
  for (size_t start = 0; start + n_ctx <= ids.size(); start += n_ctx) {
    std::vector<int32_t>& w =
        windows.emplace_back(ids.begin() + start, ids.begin() + start + n_ctx);
    if (bos >= 0) w[0] = bos;
  }
  return windows;
}

}  // namespace h2o
