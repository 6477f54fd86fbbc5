#include "eval/lm_requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "eval/token_feed.h"
#include "runtime/log_softmax.h"

namespace h2o {

Result<ScoreRequest> ParseScoreRequest(const JsonlLine& line) {
  ScoreRequest r;
  r.request = line.value;
  H2O_ASSIGN_OR_RETURN(r.prompt, StringField(line, "prompt"));
  const auto echo = line.value.find("echo");
  H2O_ASSIGN_OR_RETURN(const int64_t max_tokens, IntField(line, "max_tokens", 0));
  if (echo == line.value.end() || *echo != true || max_tokens != 0) {
    return Status::Error(fmt::format(
        "{}: only scoring requests (\"echo\": true, \"max_tokens\": 0) are supported", line.where));
  }
  H2O_ASSIGN_OR_RETURN(const int64_t logprobs, IntField(line, "logprobs", 1));
  if (logprobs < 0) {
    return Status::Error(fmt::format("{}: 'logprobs' must not be negative", line.where));
  }
  r.top_k = static_cast<int32_t>(std::clamp<int64_t>(logprobs, 1, 1 << 20));
  return r;
}

Result<PromptLogprobs> ScorePrompt(Engine& engine, Sequence& sequence,
                                   std::span<const int32_t> ids, int32_t top_k) {
  if (ids.empty()) return Status::Error("the prompt has no tokens");
  sequence.Reset();
  PromptLogprobs out;
  out.ids.assign(ids.begin(), ids.end());
  out.logprob.assign(ids.size(), 0.0);
  out.top.resize(ids.size());
  std::vector<int32_t> order;
  auto visit = [&](size_t i, std::span<const float> logits) {
    const size_t next = i + 1;
    out.logprob[next] = -NegLogSoftmax(logits, ids[next]);
    const size_t k = std::min(static_cast<size_t>(top_k), logits.size());
    order.resize(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    for (size_t j = 0; j < k; ++j) {
      out.top[next].emplace_back(order[j], -NegLogSoftmax(logits, order[j]));
    }
  };
  // The last token is not fed: nothing after it is scored.
  Sequence* const sequences[] = {&sequence};
  const size_t n_vocab = engine.model().hparams().n_vocab;
  H2O_RETURN_IF_ERROR(FeedLockstep(engine, sequences, ids.first(ids.size() - 1),
                                   LogitsFor::kAllTokens, [&](size_t begin, size_t len) {
                                     for (size_t t = 0; t < len; ++t) {
                                       visit(begin + t,
                                             sequence.logits().subspan(t * n_vocab, n_vocab));
                                     }
                                   }));
  return out;
}

nlohmann::ordered_json ScoreResultLine(const ScoreRequest& request, const PromptLogprobs& scored,
                                       const Tokenizer& tokenizer, double seconds) {
  using Json = nlohmann::ordered_json;
  const auto& pieces = tokenizer.vocab().tokens;
  Json tokens = Json::array(), token_logprobs = Json::array(), top_logprobs = Json::array(),
       text_offset = Json::array();
  size_t offset = 0;
  for (size_t i = 0; i < scored.ids.size(); ++i) {
    const int32_t id = scored.ids[i];
    tokens.push_back(pieces[id]);
    text_offset.push_back(offset);
    std::string text = tokenizer.TokenToPiece(id);
    // The dummy prefix space the tokenizer added is not in the prompt.
    if (i == 0 && tokenizer.vocab().add_space_prefix && text.starts_with(' ')) text.erase(0, 1);
    offset += text.size();
    if (i == 0) {
      token_logprobs.push_back(nullptr);
      top_logprobs.push_back(nullptr);
      continue;
    }
    token_logprobs.push_back(scored.logprob[i]);
    Json top = Json::object();
    for (const auto& [top_id, logprob] : scored.top[i]) top[pieces[top_id]] = logprob;
    top_logprobs.push_back(std::move(top));
  }
  Json logprobs = {{"tokens", std::move(tokens)},
                   {"token_logprobs", std::move(token_logprobs)},
                   {"top_logprobs", std::move(top_logprobs)},
                   {"text_offset", std::move(text_offset)}};
  Json choice = {
      {"text", request.prompt}, {"logprobs", std::move(logprobs)}, {"finish_reason", "length"}};
  Json result = {{"choices", Json::array({std::move(choice)})},
                 {"request_time", {{"batch_time", seconds}, {"batch_size", 1}}}};
  return Json{{"request", request.request}, {"result", std::move(result)}};
}

}  // namespace h2o
