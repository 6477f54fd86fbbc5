#include "eval/retrieval.h"

#include <fmt/format.h>

#include <algorithm>

namespace h2o {

Result<RetrievalItem> ParseRetrievalItem(const JsonlLine& line, const Tokenizer& tokenizer) {
  RetrievalItem item;
  H2O_ASSIGN_OR_RETURN(const std::string context, StringField(line, "context"));
  H2O_ASSIGN_OR_RETURN(const std::string question, StringField(line, "question"));
  H2O_ASSIGN_OR_RETURN(item.outputs, StringListField(line, "outputs"));
  H2O_ASSIGN_OR_RETURN(const int64_t max_tokens, IntField(line, "max_tokens", 32));
  H2O_ASSIGN_OR_RETURN(item.depth, NumberField(line, "depth", -1));
  if (line.value.contains("task") && !line.value["task"].is_null()) {
    H2O_ASSIGN_OR_RETURN(item.task, StringField(line, "task"));
  }
  if (item.outputs.empty()) {
    return Status::Error(fmt::format("{}: 'outputs' must list what an answer contains", line.where));
  }
  if (max_tokens < 1 || max_tokens > 4096) {
    return Status::Error(fmt::format("{}: 'max_tokens' must be from 1 to 4096", line.where));
  }
  item.max_tokens = static_cast<int32_t>(max_tokens);
  item.ids = tokenizer.Encode(context + question, /*add_special=*/true);
  const std::vector<int32_t> alone = tokenizer.Encode(context, /*add_special=*/true);
  item.context_tokens = static_cast<size_t>(
      std::mismatch(alone.begin(), alone.end(), item.ids.begin(), item.ids.end()).first -
      alone.begin());
  if (item.context_tokens == 0 || item.context_tokens >= item.ids.size()) {
    return Status::Error(
        fmt::format("{}: the context and the question must each have tokens", line.where));
  }
  H2O_ASSIGN_OR_RETURN(item.length,
                       IntField(line, "length",
                                static_cast<int64_t>(item.ids.size()) + item.max_tokens));
  return item;
}

}  // namespace h2o
