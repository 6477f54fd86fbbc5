// h2o eval on multiple-choice items: acc and acc_norm per policy.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "eval/multiple_choice.h"
#include "eval/progress.h"
#include "eval/task_format.h"
#include "eval_common.h"

namespace h2o::cli {

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
  const int64_t n_ctx = ContextSize(f, model);
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
  // Without --budget, each row is printed as soon as its policy is done.
  const bool rows_as_they_come = !f.json && f.budgets.empty();
  if (!f.json) {
    std::printf("%s: %zu items, %d-shot, multiple choice, chunk %d%s\n", f.task_path.c_str(),
                items.size(), f.shots, f.model.chunk, CutNote(truncated, "context", n_ctx).c_str());
  }
  if (rows_as_they_come)
    std::printf("%-28s %8s %8s %9s %8s\n", "kv", "acc", "+/-", "acc_norm", "+/-");
  for (const EvalRun& run : runs) {
    ProgressBar progress(run.entry.spec, static_cast<int64_t>(items.size()),
                         ProgressBar::Enabled(f.quiet));
    RunSessions sessions(f, model, run.spec, f.model.kv_pos_shift);
    const SessionSource source = sessions.Source();
    std::unique_ptr<ChoiceScorer> scorer;
    Session* scorer_session = nullptr;
    ChoiceAccuracy accuracy;
    for (size_t i = 0; i < items.size(); ++i) {
      auto session = source(static_cast<int64_t>(tokens[i].shared));
      if (!session.ok()) return Fail(session.status().WithContext(lines[i].where));
      if (*session != scorer_session) {
        scorer = std::make_unique<ChoiceScorer>(**session);
        scorer_session = *session;
      }
      auto scores = scorer->Score(tokens[i]);
      if (!scores.ok()) return Fail(scores.status().WithContext(lines[i].where));
      accuracy.Add(*scores, items[i].gold);
      progress.Advance();
    }
    progress.Finish();
    const SweepRow& row = report.rows.emplace_back(
        SweepRow{run.entry.policy,
                 run.entry.budget,
                 run.entry.spec,
                 {accuracy.acc(), accuracy.acc_norm(), ProportionStdErr(accuracy.acc(), accuracy.n),
                  ProportionStdErr(accuracy.acc_norm(), accuracy.n)}});
    if (rows_as_they_come) {
      std::printf("%-28s %8.4f %8.4f %9.4f %8.4f\n", row.kv.c_str(), row.values[0], row.values[2],
                  row.values[1], row.values[3]);
      std::fflush(stdout);
    }
  }
  return FinishReport(f, TaskFormat::kMultipleChoice, items.size(), n_ctx,
                      {{"shots", f.shots}, {"truncated_items", truncated}}, report);
}

}  // namespace h2o::cli
