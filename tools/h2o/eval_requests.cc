// h2o eval on the H2O repository's scoring requests: one result line per
// request (lm_requests.h), to --out or stdout.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "core/atomic_file.h"
#include "eval/lm_requests.h"
#include "eval/task_format.h"
#include "eval_common.h"
#include "report/json_line.h"
#include "report/progress.h"

namespace h2o::cli {

int RunScoreRequests(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                     std::span<const JsonlLine> lines, std::span<const EvalRun> runs) {
  if (runs.size() != 1) {
    return Fail(
        "scoring requests are answered under one --kv policy per run, at one --kv-type (run "
        "once per policy, each with its own --out)");
  }
  if (!f.report_prefix.empty()) {
    return Fail("--report applies to multiple choice and summarization, not scoring requests");
  }
  std::vector<ScoreRequest> requests;
  for (const JsonlLine& line : lines) {
    auto request = ParseScoreRequest(line);
    if (!request.ok()) return Fail(request.status());
    requests.push_back(std::move(request).value());
  }
  const EvalRun& run = runs.front();
  auto engine = MakeEvalEngine(f, model, 1);
  if (!engine.ok()) return Fail(engine.status());
  RunSequence sequence(f, model, run.spec, run.types, f.model.kv_pos_shift);
  std::string results;
  int64_t n_tokens = 0;
  double logprob_sum = 0.0;
  ProgressBar progress(run.entry.spec, static_cast<int64_t>(requests.size()),
                       ProgressBar::Enabled(Quiet()));
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    // As the repository's run_lm_eval_harness.py: no BOS.
    const std::vector<int32_t> ids = tokenizer.Encode(requests[i].prompt, /*add_special=*/false);
    auto seq = sequence.For(**engine, static_cast<int64_t>(ids.size()));
    if (!seq.ok()) return Fail(seq.status().WithContext(lines[i].where));
    auto scored = ScorePrompt(**engine, **seq, ids, requests[i].top_k);
    if (!scored.ok()) return Fail(scored.status().WithContext(lines[i].where));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results += JsonLine(ScoreResultLine(requests[i], *scored, tokenizer, seconds));
    n_tokens += static_cast<int64_t>(ids.size()) - 1;
    for (size_t t = 1; t < ids.size(); ++t) logprob_sum += scored->logprob[t];
    progress.Advance();
  }
  progress.Finish();
  if (f.out_path.empty()) {
    std::fwrite(results.data(), 1, results.size(), stdout);
  } else if (Status s = WriteFileAtomically(f.out_path, results); !s.ok()) {
    return Fail(s);
  } else {
    Note("wrote {}", f.out_path);
  }
  const double mean = n_tokens > 0 ? logprob_sum / n_tokens : 0.0;
  if (f.json && !f.out_path.empty()) {
    const nlohmann::json out = {{"task", f.task_path},
                                {"format", TaskFormatName(TaskFormat::kScoreRequests)},
                                {"model", f.model.model_path},
                                {"kv", run.entry.spec},
                                {"chunk", f.model.chunk},
                                {"requests", requests.size()},
                                {"scored_tokens", n_tokens},
                                {"mean_logprob", mean},
                                {"out", f.out_path}};
    std::printf("%s\n", out.dump(2).c_str());
  } else if (!f.out_path.empty() || !Quiet()) {
    // Without --out, stdout holds the result lines only.
    std::FILE* summary = f.out_path.empty() ? stderr : stdout;
    std::fprintf(summary,
                 "%s: answered %zu request%s under %s (%lld scored tokens, mean logprob "
                 "%.5f)%s\n",
                 f.task_path.c_str(), requests.size(), requests.size() == 1 ? "" : "s",
                 run.entry.spec.c_str(),
                 static_cast<long long>(n_tokens), mean,
                 f.out_path.empty() ? "" : fmt::format(" -> {}", f.out_path).c_str());
  }
  return 0;
}

}  // namespace h2o::cli
