#include "eval/generation.h"

#include <algorithm>

#include "eval/perplexity.h"

namespace h2o {
namespace {

// Where the earliest stop string begins in text, or npos.
size_t FindStop(const std::string& text, std::span<const std::string> stops) {
  size_t first = std::string::npos;
  for (const std::string& stop : stops) {
    if (!stop.empty()) first = std::min(first, text.find(stop));
  }
  return first;
}

}  // namespace

Result<Generation> GenerateUntil(Session& session, const Tokenizer& tokenizer,
                                 std::span<const int32_t> prompt,
                                 const GenerationOptions& options) {
  if (prompt.empty()) return Status::Error("the prompt has no tokens");
  session.Reset();
  H2O_RETURN_IF_ERROR(session.Eval(prompt));
  Sampler sampler(options.sampling);
  Generation out;
  out.finish_reason = "length";
  for (int32_t n = 0; n < options.max_tokens; ++n) {
    const std::span<const float> logits = session.last_logits();
    const int32_t id = sampler.Sample(logits);
    if (tokenizer.IsEndOfGeneration(id)) {
      out.finish_reason = "stop";
      break;
    }
    out.ids.push_back(id);
    out.logprobs.push_back(-NegLogSoftmax(logits, id));
    out.text += tokenizer.TokenToPiece(id);
    if (const size_t stop = FindStop(out.text, options.stop); stop != std::string::npos) {
      out.text.resize(stop);
      out.finish_reason = "stop";
      break;
    }
    // The last token is not fed: nothing samples after it.
    if (n + 1 < options.max_tokens) {
      const int32_t next[] = {id};
      H2O_RETURN_IF_ERROR(session.Eval(next));
    }
  }
  return out;
}

}  // namespace h2o
