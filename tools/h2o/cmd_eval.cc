// h2o eval: task accuracy under each KV policy (a --kv list, or policies x
// --budget). The task file's format decides the evaluation: multiple
// choice (acc, acc_norm), the H2O repository's scoring requests (answered
// as result lines), or summarization (--generate; ROUGE and Self-BLEU).
#include <fmt/format.h>

#include <memory>

#include "cli_errors.h"
#include "commands.h"
#include "eval/task_format.h"
#include "eval_common.h"

namespace h2o::cli {
namespace {

int RunEval(const EvalFlags& f) {
  auto runs = ExpandEvalRuns(f);
  if (!runs.ok()) return Fail(runs.status());
  auto read = ReadJsonl(f.task_path);
  if (!read.ok()) return Fail(read.status());
  std::span<const JsonlLine> lines = *read;
  if (f.limit > 0 && static_cast<size_t>(f.limit) < lines.size()) lines = lines.first(f.limit);
  auto format = DetectTaskFormat(lines);
  if (!format.ok()) return Fail(format.status());
  if (f.generate && *format != TaskFormat::kSummarization) {
    return Fail(
        fmt::format("{}: --generate needs summarization items ({{\"article\", "
                    "\"summary_gt\", ...}}), not {}",
                    f.task_path, TaskFormatName(*format)));
  }
  if (f.shots > 0 && *format != TaskFormat::kMultipleChoice) {
    return Fail(
        fmt::format("--shots applies to multiple-choice tasks, not {}", TaskFormatName(*format)));
  }
  if (!f.out_path.empty() &&
      (*format == TaskFormat::kMultipleChoice || *format == TaskFormat::kRetrieval)) {
    return Fail(fmt::format(
        "--out applies to scoring requests and summarization, not {} (--report writes the "
        "results table)",
        TaskFormatName(*format)));
  }
  if (f.question_in_context && *format != TaskFormat::kRetrieval) {
    return Fail(fmt::format("--question-in-context applies to retrieval tasks, not {}",
                            TaskFormatName(*format)));
  }
  if (!f.model.kv_dump_path.empty() && *format != TaskFormat::kRetrieval) {
    return Fail(fmt::format("--kv-dump applies to retrieval tasks, not {}",
                            TaskFormatName(*format)));
  }
  if (!f.out_path.empty()) {
    if (Status st = CheckWritable(f.out_path, "--out"); !st.ok()) return Fail(st);
  }
  if (!f.report_prefix.empty()) {
    if (Status st = CheckWritable(f.report_prefix + ".json", "--report"); !st.ok()) return Fail(st);
  }
  auto model = LoadModel(f.model);
  if (!model.ok()) return Fail(model.status());
  auto tokenizer = LoadTokenizer(**model);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  switch (*format) {
    case TaskFormat::kMultipleChoice:
      return RunMultipleChoice(f, **model, *tokenizer, lines, *runs);
    case TaskFormat::kScoreRequests:
      return RunScoreRequests(f, **model, *tokenizer, lines, *runs);
    case TaskFormat::kSummarization:
      return RunSummarization(f, **model, *tokenizer, lines, *runs);
    case TaskFormat::kRetrieval:
      return RunRetrieval(f, **model, *tokenizer, lines, *runs);
  }
  return 1;
}

}  // namespace

Command RegisterEval(CLI::App& app) {
  auto f = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "task accuracy per KV policy: multiple choice, H2O-repository scoring requests, "
      "summarization, long-context retrieval (h2o mktask ruler)");
  AddModelFlags(*cmd, f->model, /*default_chunk=*/1, /*kv_type_list=*/true);
  cmd->get_option("--kv")->description(
      "KV spec(s), comma-separated, one result row each, e.g. full,h2o:heavy=10%,recent=10%; "
      "with --budget: policies without their budget keys, e.g. full,local,h2o,h2o:score=mean");
  cmd->add_option("--task", f->task_path,
                  "JSONL task: {context, choices, gold} lines, or the H2O repository's "
                  "{prompt, echo, max_tokens: 0} requests, or {article, summary_gt} items")
      ->required();
  cmd->add_option("--budget", f->budgets,
                  "sweep: run every --kv policy at each budget, e.g. 10%,20%,40% or 16,32,64 "
                  "(percentages of each item's prompt; h2o: half heavy, half recent; full runs "
                  "once)");
  CheckKvSweepWhenParsed(*cmd, &f->model.kv_spec, &f->budgets);
  cmd->add_option("--report", f->report_prefix,
                  "write the results table as PREFIX.md, PREFIX.csv and PREFIX.json, and with "
                  "--budget a plot per metric (PREFIX.svg for the first, PREFIX.<metric>.svg)");
  cmd->add_option("--shots", f->shots,
                  "multiple choice: solved examples before each item (the items after it)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--limit", f->limit, "use only the first N items (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--generate", f->generate, "summarization: generate and score with ROUGE");
  cmd->add_option("--out", f->out_path,
                  "scoring requests: write the result lines here instead of stdout; "
                  "summarization: write each generation as a result line");
  cmd->add_option("--temp", f->temperature,
                  "summarization: sampling temperature for every item (0: greedy; default: "
                  "each item's \"temperature\")")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", f->seed, "summarization: sampling seed (each item starts from it)")
      ->capture_default_str();
  cmd->add_flag("--question-in-context", f->question_in_context,
                "retrieval: compress context and question together (query-aware); default: the "
                "context alone, the question fed after (query-agnostic, as kvpress)");
  cmd->add_flag("--json", f->json, "print the results as JSON");
  return {cmd, [f, cmd] {
            f->chunk_given = cmd->get_option("--chunk")->count() > 0;
            return RunEval(*f);
          }};
}

}  // namespace h2o::cli
