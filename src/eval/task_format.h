// Which kind of task a JSONL file holds, told by the fields of its lines:
// multiple choice {"context", "choices", "gold"}, the H2O repository's
// scoring requests {"prompt", "echo", ...}, its summarization items
// {"article", "summary_gt", ...}, or long-context retrieval items
// {"context", "question", "outputs", ...} (`h2o mktask ruler`).
#pragma once

#include <span>
#include <string_view>

#include "core/status.h"
#include "eval/jsonl.h"

namespace h2o {

enum class TaskFormat { kMultipleChoice, kScoreRequests, kSummarization, kRetrieval };

std::string_view TaskFormatName(TaskFormat format);  // "multiple-choice", ...

// The format of the first line; every other line must have the same one.
// Errors name the first line that fits no format or differs from the first.
Result<TaskFormat> DetectTaskFormat(std::span<const JsonlLine> lines);

}  // namespace h2o
