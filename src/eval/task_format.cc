#include "eval/task_format.h"

#include <fmt/format.h>

#include <optional>

namespace h2o {
namespace {

std::optional<TaskFormat> FormatOf(const JsonlLine& line) {
  const auto& v = line.value;
  if (v.contains("question") && v.contains("outputs")) return TaskFormat::kRetrieval;
  if (v.contains("context") && v.contains("choices")) return TaskFormat::kMultipleChoice;
  if (v.contains("prompt")) return TaskFormat::kScoreRequests;
  if (v.contains("article")) return TaskFormat::kSummarization;
  return std::nullopt;
}

}  // namespace

std::string_view TaskFormatName(TaskFormat format) {
  switch (format) {
    case TaskFormat::kMultipleChoice:
      return "multiple-choice";
    case TaskFormat::kScoreRequests:
      return "score-requests";
    case TaskFormat::kSummarization:
      return "summarization";
    case TaskFormat::kRetrieval:
      return "retrieval";
  }
  return "?";
}

Result<TaskFormat> DetectTaskFormat(std::span<const JsonlLine> lines) {
  H2O_CHECK(!lines.empty());
  std::optional<TaskFormat> first;
  for (const JsonlLine& line : lines) {
    const std::optional<TaskFormat> format = FormatOf(line);
    if (!format) {
      return Status::Error(fmt::format(
          "{}: unknown task format (expected {{\"context\", \"choices\", \"gold\"}}, "
          "{{\"prompt\", \"echo\", \"max_tokens\", ...}}, {{\"article\", \"summary_gt\", ...}} or "
          "{{\"context\", \"question\", \"outputs\", ...}})",
          line.where));
    }
    if (!first) first = format;
    if (*format != *first) {
      return Status::Error(fmt::format("{}: a {} line in a {} file", line.where,
                                       TaskFormatName(*format), TaskFormatName(*first)));
    }
  }
  return *first;
}

}  // namespace h2o
