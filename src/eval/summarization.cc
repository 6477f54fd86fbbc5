#include "eval/summarization.h"

#include <fmt/format.h>

namespace h2o {

Result<SummaryItem> ParseSummaryItem(const JsonlLine& line) {
  SummaryItem item;
  H2O_ASSIGN_OR_RETURN(item.article, StringField(line, "article"));
  H2O_ASSIGN_OR_RETURN(item.summary_gt, StringField(line, "summary_gt"));
  H2O_ASSIGN_OR_RETURN(const int64_t max_tokens, IntField(line, "max_tokens", 64));
  H2O_ASSIGN_OR_RETURN(const double temperature, NumberField(line, "temperature", 0.0));
  H2O_ASSIGN_OR_RETURN(const double top_p, NumberField(line, "top_p", 1.0));
  H2O_ASSIGN_OR_RETURN(item.generation.stop, StringsField(line, "stop"));
  if (max_tokens < 1 || max_tokens > INT32_MAX) {
    return Status::Error(fmt::format("{}: 'max_tokens' must be at least 1", line.where));
  }
  if (temperature < 0) {
    return Status::Error(fmt::format("{}: 'temperature' must not be negative", line.where));
  }
  if (!(top_p > 0 && top_p <= 1)) {
    return Status::Error(fmt::format("{}: 'top_p' must be in (0, 1]", line.where));
  }
  item.generation.max_tokens = static_cast<int32_t>(max_tokens);
  item.generation.sampling.temperature = static_cast<float>(temperature);
  item.generation.sampling.top_p = static_cast<float>(top_p);
  item.generation.sampling.top_k = 0;  // the repository samples with top_k off
  return item;
}

Result<SummaryPrompt> MakeSummaryPrompt(const Tokenizer& tokenizer, const std::string& article,
                                        int32_t max_tokens, int64_t n_ctx) {
  if (max_tokens + 2 > n_ctx) {
    return Status::Error(
        fmt::format("max_tokens {} leaves no room for the article in the context "
                    "size {} (raise -c)",
                    max_tokens, n_ctx));
  }
  SummaryPrompt prompt;
  prompt.ids = tokenizer.Encode(article, /*add_special=*/true);
  const int64_t room = n_ctx - max_tokens;
  if (static_cast<int64_t>(prompt.ids.size()) > room) {
    prompt.dropped = static_cast<int64_t>(prompt.ids.size()) - room;
    prompt.ids.erase(prompt.ids.begin() + 1, prompt.ids.begin() + 1 + prompt.dropped);
  }
  return prompt;
}

void RougeMean::Add(const RougeF1& f) {
  sum.rouge1 += f.rouge1;
  sum.rouge2 += f.rouge2;
  sum.rougeL += f.rougeL;
  ++n;
}

RougeF1 RougeMean::Mean() const {
  if (n == 0) return {};
  return {sum.rouge1 / n, sum.rouge2 / n, sum.rougeL / n};
}

}  // namespace h2o
