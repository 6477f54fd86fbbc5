#include "eval/multiple_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "eval/token_feed.h"
#include "runtime/log_softmax.h"

namespace h2o {

Result<ChoiceItem> ParseChoiceItem(const JsonlLine& line) {
  ChoiceItem item;
  H2O_ASSIGN_OR_RETURN(item.context, StringField(line, "context"));
  H2O_ASSIGN_OR_RETURN(item.choices, StringListField(line, "choices"));
  H2O_ASSIGN_OR_RETURN(const int64_t gold, IntField(line, "gold"));
  if (item.choices.empty()) return Status::Error(fmt::format("{}: 'choices' is empty", line.where));
  for (size_t c = 0; c < item.choices.size(); ++c) {
    if (item.choices[c].empty()) {
      return Status::Error(fmt::format("{}: choice {} is an empty string", line.where, c));
    }
  }
  if (gold < 0 || gold >= static_cast<int64_t>(item.choices.size())) {
    return Status::Error(fmt::format("{}: 'gold' is {}, outside the {} choices [0, {})", line.where,
                                     gold, item.choices.size(), item.choices.size()));
  }
  item.gold = static_cast<int32_t>(gold);
  return item;
}

std::string FewShotContext(std::span<const ChoiceItem> items, size_t index, int32_t shots) {
  H2O_CHECK(shots >= 0 && static_cast<size_t>(shots) < items.size());
  std::string text;
  for (int32_t s = 1; s <= shots; ++s) {
    const ChoiceItem& shot = items[(index + s) % items.size()];
    text.append(shot.context).append(" ").append(shot.choices[shot.gold]).append("\n\n");
  }
  return text.append(items[index].context);
}

Result<ChoiceTokens> TokenizeChoices(const Tokenizer& tokenizer, const std::string& context,
                                     std::span<const std::string> choices, int64_t max_len) {
  const std::vector<int32_t> prompt = tokenizer.Encode(context, /*add_special=*/true);
  ChoiceTokens out;
  out.shared = prompt.size();
  size_t longest = 0;
  for (size_t c = 0; c < choices.size(); ++c) {
    std::string text = context;
    std::vector<int32_t> ids =
        tokenizer.Encode(text.append(" ").append(choices[c]), /*add_special=*/true);
    // The choice's tokens are those past the prompt's tokenization; where
    // the two differ (a merge across the boundary), past the common part.
    const size_t common =
        std::mismatch(ids.begin(), ids.end(), prompt.begin(), prompt.end()).first - ids.begin();
    if (common == ids.size()) return Status::Error(fmt::format("choice {} has no tokens", c));
    out.shared = std::min(out.shared, common);
    out.choice_begin.push_back(common);
    longest = std::max(longest, ids.size());
    out.sequences.push_back(std::move(ids));
  }
  if (static_cast<int64_t>(longest) > max_len) {
    const size_t drop = longest - static_cast<size_t>(max_len);
    // Keep BOS and at least one context token before the choices.
    if (drop + 2 > out.shared) {
      size_t longest_choice = 0;
      for (size_t c = 0; c < choices.size(); ++c) {
        longest_choice = std::max(longest_choice, out.sequences[c].size() - out.choice_begin[c]);
      }
      return Status::Error(
          fmt::format("a choice of {} tokens leaves no room for its context in "
                      "the context size {} (raise -c)",
                      longest_choice, max_len));
    }
    for (auto& ids : out.sequences) ids.erase(ids.begin() + 1, ids.begin() + 1 + drop);
    for (size_t& begin : out.choice_begin) begin -= drop;
    out.shared -= drop;
    out.dropped = static_cast<int64_t>(drop);
  }
  return out;
}

size_t ChoiceScores::Best() const {
  return std::min_element(nll_sum.begin(), nll_sum.end()) - nll_sum.begin();
}

size_t ChoiceScores::BestPerToken() const {
  size_t best = 0;
  for (size_t c = 1; c < nll_sum.size(); ++c) {
    if (nll_sum[c] / n_tokens[c] < nll_sum[best] / n_tokens[best]) best = c;
  }
  return best;
}

Result<std::vector<ChoiceScores>> ChoiceScorer::Score(std::span<Sequence* const> sequences,
                                                      const ChoiceTokens& tokens) {
  H2O_CHECK(tokens.shared >= 1 && !tokens.sequences.empty() && !sequences.empty());
  const size_t n_vocab = engine_.model().hparams().n_vocab;
  const size_t n_seq = sequences.size();
  for (Sequence* s : sequences) s->Reset();
  const std::span<const int32_t> prompt(tokens.sequences[0].data(), tokens.shared);
  H2O_RETURN_IF_ERROR(FeedLockstep(engine_, sequences, prompt, LogitsFor::kLastToken));
  snapshots_.resize(n_seq);
  prompt_logits_.resize(n_seq);
  for (size_t s = 0; s < n_seq; ++s) {
    const auto last = sequences[s]->last_logits();
    prompt_logits_[s].assign(last.begin(), last.end());
    if (tokens.sequences.size() > 1) sequences[s]->Save(snapshots_[s]);
  }

  std::vector<ChoiceScores> scores(n_seq);
  std::vector<double> nll(n_seq);
  for (size_t c = 0; c < tokens.sequences.size(); ++c) {
    if (c > 0) {
      for (size_t s = 0; s < n_seq; ++s) sequences[s]->Restore(snapshots_[s]);
    }
    const std::vector<int32_t>& ids = tokens.sequences[c];
    const size_t begin = tokens.choice_begin[c];
    // Token j is predicted by the logits after token j - 1.
    auto score = [&](size_t s, size_t j, std::span<const float> logits) {
      if (j >= begin) nll[s] += NegLogSoftmax(logits, ids[j]);
    };
    for (size_t s = 0; s < n_seq; ++s) {
      nll[s] = 0.0;
      score(s, tokens.shared, std::span<const float>(prompt_logits_[s].data(), n_vocab));
    }
    // The last token is not fed: nothing after it is scored.
    const std::span<const int32_t> rest(ids.data() + tokens.shared, ids.size() - tokens.shared - 1);
    H2O_RETURN_IF_ERROR(FeedLockstep(
        engine_, sequences, rest, LogitsFor::kAllTokens, [&](size_t chunk_begin, size_t len) {
          for (size_t s = 0; s < n_seq; ++s) {
            const std::span<const float> logits = sequences[s]->logits();
            for (size_t t = 0; t < len; ++t) {
              score(s, tokens.shared + chunk_begin + t + 1, logits.subspan(t * n_vocab, n_vocab));
            }
          }
        }));
    for (size_t s = 0; s < n_seq; ++s) {
      scores[s].nll_sum.push_back(nll[s]);
      scores[s].n_tokens.push_back(static_cast<int64_t>(ids.size() - begin));
    }
  }
  return scores;
}

void ChoiceAccuracy::Add(const ChoiceScores& scores, int32_t gold) {
  ++n;
  correct += scores.Best() == static_cast<size_t>(gold);
  correct_norm += scores.BestPerToken() == static_cast<size_t>(gold);
}

double ProportionStdErr(double p, int64_t n) {
  if (n < 2) return 0.0;
  return std::sqrt(p * (1.0 - p) / static_cast<double>(n - 1));
}

}  // namespace h2o
