// h2o eval on multiple-choice items: acc and acc_norm per policy.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "eval/multiple_choice.h"
#include "eval/task_format.h"
#include "eval_common.h"
#include "report/progress.h"

namespace h2o::cli {
namespace {

// Every item under every run, the runs of an item in lockstep on one
// engine (its prompt and each choice a batch of all their sequences), with
// a progress bar over the items.
Result<std::vector<ChoiceAccuracy>> ScoreAllRuns(const EvalFlags& f, const Model& model,
                                                 std::span<const JsonlLine> lines,
                                                 std::span<const ChoiceItem> items,
                                                 std::span<const ChoiceTokens> tokens,
                                                 std::span<const EvalRun> runs,
                                                 std::vector<size_t>& kv_bytes) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, MakeEvalEngine(f, model, runs.size()));
  std::vector<RunSequence> run_sequences;
  for (const EvalRun& run : runs) {
    run_sequences.emplace_back(f, model, run.spec, run.types, f.model.kv_pos_shift);
  }
  ChoiceScorer scorer(*engine);
  std::vector<ChoiceAccuracy> accuracy(runs.size());
  std::vector<Sequence*> sequences(runs.size());
  ProgressBar progress("multiple choice", static_cast<int64_t>(items.size()),
                       ProgressBar::Enabled(Quiet()));
  for (size_t i = 0; i < items.size(); ++i) {
    for (size_t r = 0; r < runs.size(); ++r) {
      auto sequence = run_sequences[r].For(*engine, static_cast<int64_t>(tokens[i].shared));
      if (!sequence.ok()) return sequence.status().WithContext(lines[i].where);
      sequences[r] = *sequence;
    }
    auto scores = scorer.Score(sequences, tokens[i]);
    if (!scores.ok()) return scores.status().WithContext(lines[i].where);
    for (size_t r = 0; r < runs.size(); ++r) accuracy[r].Add((*scores)[r], items[i].gold);
    progress.Advance();
  }
  progress.Finish();
  for (const RunSequence& s : run_sequences) kv_bytes.push_back(s.kv_bytes());
  return accuracy;
}

}  // namespace

int RunMultipleChoice(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                      std::span<const JsonlLine> lines, std::span<const EvalRun> runs) {
  std::vector<ChoiceItem> items;
  for (const JsonlLine& line : lines) {
    auto item = ParseChoiceItem(line);
    if (!item.ok()) return Fail(item.status());
    items.push_back(std::move(item).value());
  }
  if (f.shots < 0 || static_cast<size_t>(f.shots) >= items.size()) {
    return Fail(
        fmt::format("--shots {} needs more items than shots ({} items)", f.shots, items.size()));
  }
  const int64_t n_ctx = ContextSize(f.model, model);
  std::vector<ChoiceTokens> tokens;
  int64_t truncated = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    auto t = TokenizeChoices(tokenizer, FewShotContext(items, i, f.shots), items[i].choices, n_ctx);
    if (!t.ok()) return Fail(t.status().WithContext(lines[i].where));
    truncated += t->dropped > 0;
    tokens.push_back(std::move(t).value());
  }

  SweepReport report;
  report.title = fmt::format(
      "{} on {} ({} items, {}-shot)", std::filesystem::path(f.model.model_path).filename().string(),
      std::filesystem::path(f.task_path).filename().string(), items.size(), f.shots);
  report.metrics = {{"acc", "accuracy (lowest summed NLL)", 4},
                    {"acc_norm", "accuracy (lowest NLL per choice token)", 4},
                    {"acc_stderr", "standard error of acc", 4},
                    {"acc_norm_stderr", "standard error of acc_norm", 4}};
  if (!f.json) {
    std::printf("%s: %zu items, %d-shot, multiple choice, chunk %d%s\n", f.task_path.c_str(),
                items.size(), f.shots, f.model.chunk, CutNote(truncated, "context", n_ctx).c_str());
    std::fflush(stdout);  // before the progress bar and the long wait
  }
  std::vector<size_t> kv_bytes;
  auto accuracy = ScoreAllRuns(f, model, lines, items, tokens, runs, kv_bytes);
  if (!accuracy.ok()) return Fail(accuracy.status());
  for (size_t r = 0; r < runs.size(); ++r) {
    const ChoiceAccuracy& a = (*accuracy)[r];
    report.rows.push_back(SweepRow{runs[r].label,
                                   runs[r].entry.budget,
                                   runs[r].kv,
                                   {a.acc(), a.acc_norm(), ProportionStdErr(a.acc(), a.n),
                                    ProportionStdErr(a.acc_norm(), a.n)}});
  }
  AddKvMemoryMetricWhenSwept(runs, kv_bytes, report);
  // Without --budget, a row per policy (with it, FinishReport's tables).
  if (!f.json && f.budgets.empty()) {
    std::printf("%-28s %8s %8s %9s %8s\n", "kv", "acc", "+/-", "acc_norm", "+/-");
    for (const SweepRow& row : report.rows) {
      std::printf("%-28s %8.4f %8.4f %9.4f %8.4f\n", row.kv.c_str(), row.values[0], row.values[2],
                  row.values[1], row.values[3]);
    }
  }
  return FinishReport(f, TaskFormat::kMultipleChoice, items.size(), n_ctx,
                      {{"shots", f.shots}, {"truncated_items", truncated}}, report);
}

}  // namespace h2o::cli
