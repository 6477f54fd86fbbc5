// h2o eval --generate on summarization items: each policy's generations
// scored with ROUGE against summary_gt and against the full cache's
// generations, and Self-BLEU across them.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/atomic_file.h"
#include "eval/bleu.h"
#include "eval/summarization.h"
#include "eval/task_format.h"
#include "eval_common.h"
#include "kv/policy_registry.h"
#include "report/json_line.h"
#include "report/progress.h"

namespace h2o::cli {
namespace {

// One item's generation under one policy, with its scores.
struct SummaryRun {
  Generation generation;
  RougeF1 vs_reference, vs_full;
};

// Result line in the shape of the repository's run_summarization.py output,
// plus the policy and the scores.
nlohmann::ordered_json SummaryResultLine(const JsonlLine& line, const std::string& kv,
                                         const SummaryPrompt& prompt, const SummaryRun& run,
                                         const Tokenizer& tokenizer) {
  using Json = nlohmann::ordered_json;
  Json tokens = Json::array();
  for (int32_t id : run.generation.ids) tokens.push_back(tokenizer.vocab().tokens[id]);
  auto rouge = [](const RougeF1& r) {
    return Json{{"rouge1", r.rouge1}, {"rouge2", r.rouge2}, {"rougeL", r.rougeL}};
  };
  Json choice = {{"text", run.generation.text},
                 {"logprobs",
                  {{"tokens", std::move(tokens)},
                   {"token_logprobs", run.generation.logprobs},
                   {"token_ids", run.generation.ids}}},
                 {"finish_reason", GenerationEndName(run.generation.finish_reason)}};
  Json result = {{"kv", kv},
                 {"choices", Json::array({std::move(choice)})},
                 {"prompt_tokens", prompt.ids.size()},
                 {"dropped_article_tokens", prompt.dropped},
                 {"rouge", rouge(run.vs_reference)},
                 {"rouge_vs_full", rouge(run.vs_full)}};
  return Json{{"request", line.value}, {"result", std::move(result)}};
}

// Every item's generations: the full-cache reference's and each run's, all
// of an item in lockstep on one engine. A full run in the list reuses the
// reference's (same prompt, options and seed: the same text). The
// reference keeps positions as they are: --kv-pos-shift is for the
// evicting policies.
Status GenerateAll(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                   std::span<const JsonlLine> lines, std::span<const SummaryItem> items,
                   std::span<const SummaryPrompt> prompts, std::span<const EvalRun> runs,
                   std::vector<SummaryRun>& full, std::vector<std::vector<SummaryRun>>& generated,
                   std::vector<size_t>& kv_bytes) {
  std::vector<RunSequence> run_sequences;
  // The reference: the full cache at the first --kv-type.
  const KvTypes& reference_types = runs.front().types;
  run_sequences.emplace_back(f, model, ParseKvSpec("full").value(), reference_types, false);
  std::vector<size_t> job_of_run;  // each run's job; 0: the reference
  for (const EvalRun& run : runs) {
    const bool is_reference = !PolicyEvicts(run.spec.policy) && run.types == reference_types;
    job_of_run.push_back(is_reference ? 0 : run_sequences.size());
    if (!is_reference) {
      run_sequences.emplace_back(f, model, run.spec, run.types, f.model.kv_pos_shift);
    }
  }
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                       MakeEvalEngine(f, model, run_sequences.size()));
  std::vector<GenerateJob> jobs(run_sequences.size());
  ProgressBar progress("summarization", static_cast<int64_t>(items.size()),
                       ProgressBar::Enabled(Quiet()));
  for (size_t i = 0; i < items.size(); ++i) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      auto sequence = run_sequences[j].For(*engine, static_cast<int64_t>(prompts[i].ids.size()));
      if (!sequence.ok()) return sequence.status().WithContext(lines[i].where);
      jobs[j] = {*sequence, prompts[i].ids, items[i].generation};
    }
    auto generations = GenerateLockstep(*engine, jobs, &tokenizer);
    if (!generations.ok()) return generations.status().WithContext(lines[i].where);
    std::vector<SummaryRun> of_jobs;
    for (Generation& g : *generations) {
      const RougeF1 vs_reference = Rouge(g.text, items[i].summary_gt);
      of_jobs.push_back({std::move(g), vs_reference, {}});
    }
    full.push_back(of_jobs[0]);
    for (size_t r = 0; r < runs.size(); ++r) generated[r].push_back(of_jobs[job_of_run[r]]);
    progress.Advance();
  }
  progress.Finish();
  for (size_t r = 0; r < runs.size(); ++r) kv_bytes.push_back(run_sequences[job_of_run[r]].kv_bytes());
  return Status::Ok();
}

}  // namespace

int RunSummarization(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                     std::span<const JsonlLine> lines, std::span<const EvalRun> runs) {
  const int64_t n_ctx = ContextSize(f.model, model);
  std::vector<SummaryItem> items;
  std::vector<SummaryPrompt> prompts;
  int64_t truncated = 0;
  for (const JsonlLine& line : lines) {
    auto item = ParseSummaryItem(line);
    if (!item.ok()) return Fail(item.status());
    if (f.temperature >= 0) item->generation.sampling.temperature = f.temperature;
    item->generation.sampling.seed = f.seed;
    auto prompt = MakeSummaryPrompt(tokenizer, item->article, item->generation.max_tokens, n_ctx);
    if (!prompt.ok()) return Fail(prompt.status().WithContext(line.where));
    truncated += prompt->dropped > 0;
    items.push_back(std::move(item).value());
    prompts.push_back(std::move(prompt).value());
  }
  std::vector<SummaryRun> full;
  std::vector<std::vector<SummaryRun>> generated(runs.size());
  std::vector<size_t> kv_bytes;
  if (Status s =
          GenerateAll(f, model, tokenizer, lines, items, prompts, runs, full, generated, kv_bytes);
      !s.ok()) {
    return Fail(s);
  }

  SweepReport report;
  report.title = fmt::format("{} on {} ({} items)",
                             std::filesystem::path(f.model.model_path).filename().string(),
                             std::filesystem::path(f.task_path).filename().string(), items.size());
  report.metrics = {{"rouge1", "ROUGE-1 F1 against summary_gt", 4},
                    {"rouge2", "ROUGE-2 F1 against summary_gt", 4},
                    {"rougeL", "ROUGE-L F1 against summary_gt", 4},
                    {"rouge1_vs_full", "ROUGE-1 F1 against the full cache's output", 4},
                    {"rouge2_vs_full", "ROUGE-2 F1 against the full cache's output", 4},
                    {"rougeL_vs_full", "ROUGE-L F1 against the full cache's output", 4},
                    {"self_bleu", "Self-BLEU of the generations (lower: more diverse)", 4},
                    {"mean_generated_tokens", "generated tokens per item", 1}};
  std::string out_lines;
  for (size_t r = 0; r < runs.size(); ++r) {
    const EvalRun& run = runs[r];
    RougeMean vs_reference, vs_full;
    std::vector<std::string> texts;
    int64_t n_tokens = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      SummaryRun& g = generated[r][i];
      g.vs_full = Rouge(g.generation.text, full[i].generation.text);
      vs_reference.Add(g.vs_reference);
      vs_full.Add(g.vs_full);
      texts.push_back(g.generation.text);
      n_tokens += static_cast<int64_t>(g.generation.ids.size());
      if (!f.out_path.empty()) {
        out_lines += JsonLine(SummaryResultLine(lines[i], run.kv, prompts[i], g, tokenizer));
      }
    }
    const RougeF1 ref = vs_reference.Mean(), vsf = vs_full.Mean();
    report.rows.push_back({run.label,
                           run.entry.budget,
                           run.kv,
                           {ref.rouge1, ref.rouge2, ref.rougeL, vsf.rouge1, vsf.rouge2, vsf.rougeL,
                            SelfBleu(texts), static_cast<double>(n_tokens) / items.size()}});
  }
  AddKvMemoryMetricWhenSwept(runs, kv_bytes, report);
  if (!f.out_path.empty()) {
    if (Status s = WriteFileAtomically(f.out_path, out_lines); !s.ok()) return Fail(s);
    Note("wrote {}", f.out_path);
  }
  if (!f.json) {
    std::printf("%s: %zu items, summarization, chunk %d%s\n", f.task_path.c_str(), items.size(),
                f.model.chunk, CutNote(truncated, "article", n_ctx).c_str());
  }
  if (!f.json && f.budgets.empty()) {
    std::printf("%-28s %7s %7s %7s   %-23s %9s\n", "kv", "R-1", "R-2", "R-L", "R-1/2/L vs full",
                "self-BLEU");
    for (const SweepRow& row : report.rows) {
      const auto& v = row.values;
      std::printf("%-28s %7.4f %7.4f %7.4f   %.4f %.4f %.4f %9.4f\n", row.kv.c_str(), v[0], v[1],
                  v[2], v[3], v[4], v[5], v[6]);
    }
  }
  return FinishReport(f, TaskFormat::kSummarization, items.size(), n_ctx,
                      {{"seed", f.seed}, {"truncated_items", truncated}}, report);
}

}  // namespace h2o::cli
