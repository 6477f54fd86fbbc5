// h2o eval: task accuracy under each KV policy. The task file's format
// decides the evaluation: multiple choice (acc, acc_norm), the H2O
// repository's scoring requests (answered as result lines), or
// summarization (--generate; ROUGE and Self-BLEU).
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "core/atomic_file.h"
#include "eval/bleu.h"
#include "eval/jsonl.h"
#include "eval/lm_requests.h"
#include "eval/multiple_choice.h"
#include "eval/progress.h"
#include "eval/session_source.h"
#include "eval/summarization.h"
#include "eval/task_format.h"

namespace h2o::cli {
namespace {

struct EvalFlags {
  ModelFlags model;
  std::string task_path;
  int32_t shots = 0;
  int64_t limit = 0;
  bool generate = false;
  std::string out_path;
  float temperature = -1;  // < 0: each item's own
  uint64_t seed = 0;
  bool json = false;
  bool quiet = false;
};

// One --kv spec of the list, and the sessions it runs items on.
class PolicyRun {
 public:
  PolicyRun(const EvalFlags& f, const Model& model, const KvSpec& spec)
      : flags_(f.model), model_(model), per_item_(KvSpecUsesPercent(spec)) {
    flags_.kv_spec = spec.text;
    // --kv-pos-shift is for the evicting policies in the list; the full
    // cache they are compared with keeps positions as they are.
    if (spec.policy == "full") flags_.kv_pos_shift = false;
  }

  // Percent budgets resolve against each item's prompt, so those specs get
  // a session per item; the others one session for every item.
  SessionSource Source() {
    return [this](int64_t prompt_len) -> Result<Session*> {
      if (session_ == nullptr || per_item_) {
        H2O_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(flags_, prompt_len));
        H2O_ASSIGN_OR_RETURN(session_, Session::Create(model_, options));
      }
      return session_.get();
    };
  }

 private:
  ModelFlags flags_;
  const Model& model_;
  bool per_item_;
  std::unique_ptr<Session> session_;
};

// Every spec of the --kv list, checked before anything runs.
Result<std::vector<KvSpec>> ParseKvList(const std::string& text) {
  H2O_ASSIGN_OR_RETURN(std::vector<std::string> texts, SplitKvSpecList(text));
  std::vector<KvSpec> specs;
  for (const std::string& t : texts) {
    auto spec = ParseKvSpec(t);
    if (!spec.ok()) return spec.status().WithContext(fmt::format("'{}'", t));
    specs.push_back(std::move(spec).value());
  }
  return specs;
}

// ", 3 contexts cut from the left to fit 512 tokens", or "" for none.
std::string CutNote(int64_t count, const char* noun, int64_t n_ctx) {
  if (count == 0) return "";
  return fmt::format(", {} {}{} cut from the left to fit {} tokens", count, noun,
                     count == 1 ? "" : "s", n_ctx);
}

// The context size sessions get: -c, else the model's.
int64_t ContextSize(const EvalFlags& f, const Model& model) {
  return f.model.n_ctx > 0 ? f.model.n_ctx : model.hparams().n_ctx_train;
}

int RunMultipleChoice(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                      std::span<const JsonlLine> lines, std::span<const KvSpec> specs) {
  std::vector<ChoiceItem> items;
  for (const JsonlLine& line : lines) {
    auto item = ParseChoiceItem(line);
    if (!item.ok()) return Fail(item.status());
    items.push_back(std::move(item).value());
  }
  if (f.shots < 0 || static_cast<size_t>(f.shots) >= items.size()) {
    return Fail(fmt::format("--shots {} needs more items than shots ({} items)", f.shots,
                            items.size()));
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

  nlohmann::json rows = nlohmann::json::array();
  if (!f.json) {
    std::printf("%s: %zu items, %d-shot, multiple choice, chunk %d%s\n", f.task_path.c_str(),
                items.size(), f.shots, f.model.chunk, CutNote(truncated, "context", n_ctx).c_str());
    std::printf("%-28s %8s %8s %9s %8s\n", "kv", "acc", "+/-", "acc_norm", "+/-");
  }
  for (const KvSpec& spec : specs) {
    ProgressBar progress(spec.text, static_cast<int64_t>(items.size()),
                         ProgressBar::Enabled(f.quiet));
    PolicyRun run(f, model, spec);
    const SessionSource source = run.Source();
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
    const double acc_se = ProportionStdErr(accuracy.acc(), accuracy.n);
    const double norm_se = ProportionStdErr(accuracy.acc_norm(), accuracy.n);
    rows.push_back({{"kv", spec.text},
                    {"acc", accuracy.acc()},
                    {"acc_stderr", acc_se},
                    {"acc_norm", accuracy.acc_norm()},
                    {"acc_norm_stderr", norm_se},
                    {"n", accuracy.n}});
    progress.Finish();
    if (!f.json) {
      std::printf("%-28s %8.4f %8.4f %9.4f %8.4f\n", spec.text.c_str(), accuracy.acc(), acc_se,
                  accuracy.acc_norm(), norm_se);
      std::fflush(stdout);
    }
  }
  if (f.json) {
    const nlohmann::json out = {{"task", f.task_path},
                                {"format", TaskFormatName(TaskFormat::kMultipleChoice)},
                                {"model", f.model.model_path},
                                {"items", items.size()},
                                {"shots", f.shots},
                                {"chunk", f.model.chunk},
                                {"kv_type", f.model.kv_type},
                                {"n_ctx", n_ctx},
                                {"truncated_items", truncated},
                                {"results", rows}};
    std::printf("%s\n", out.dump(2).c_str());
  }
  return 0;
}

int RunScoreRequests(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                     std::span<const JsonlLine> lines, std::span<const KvSpec> specs) {
  if (specs.size() != 1) {
    return Fail("scoring requests are answered under one --kv policy per run (run once per "
                "policy, each with its own --out)");
  }
  std::vector<ScoreRequest> requests;
  for (const JsonlLine& line : lines) {
    auto request = ParseScoreRequest(line);
    if (!request.ok()) return Fail(request.status());
    requests.push_back(std::move(request).value());
  }
  PolicyRun run(f, model, specs[0]);
  const SessionSource source = run.Source();
  std::string results;
  int64_t n_tokens = 0;
  double logprob_sum = 0.0;
  ProgressBar progress(specs[0].text, static_cast<int64_t>(requests.size()),
                       ProgressBar::Enabled(f.quiet));
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int32_t> ids = tokenizer.Encode(requests[i].prompt, /*add_bos=*/false);
    auto session = source(static_cast<int64_t>(ids.size()));
    if (!session.ok()) return Fail(session.status().WithContext(lines[i].where));
    auto scored = ScorePrompt(**session, ids, requests[i].top_k);
    if (!scored.ok()) return Fail(scored.status().WithContext(lines[i].where));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    results += ScoreResultLine(requests[i], *scored, tokenizer, seconds)
                   .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    results += '\n';
    n_tokens += static_cast<int64_t>(ids.size()) - 1;
    for (size_t t = 1; t < ids.size(); ++t) logprob_sum += scored->logprob[t];
    progress.Advance();
  }
  progress.Finish();
  if (f.out_path.empty()) {
    std::fwrite(results.data(), 1, results.size(), stdout);
  } else if (Status s = WriteFileAtomically(f.out_path, results); !s.ok()) {
    return Fail(s);
  }
  const double mean = n_tokens > 0 ? logprob_sum / n_tokens : 0.0;
  if (f.json && !f.out_path.empty()) {
    const nlohmann::json out = {{"task", f.task_path},
                                {"format", TaskFormatName(TaskFormat::kScoreRequests)},
                                {"model", f.model.model_path},
                                {"kv", specs[0].text},
                                {"chunk", f.model.chunk},
                                {"requests", requests.size()},
                                {"scored_tokens", n_tokens},
                                {"mean_logprob", mean},
                                {"out", f.out_path}};
    std::printf("%s\n", out.dump(2).c_str());
  } else if (!f.quiet) {
    // Without --out, stdout holds the result lines only.
    std::FILE* summary = f.out_path.empty() ? stderr : stdout;
    std::fprintf(summary, "%s: answered %zu requests under %s (%lld scored tokens, mean logprob "
                 "%.5f)%s\n", f.task_path.c_str(), requests.size(), specs[0].text.c_str(),
                 static_cast<long long>(n_tokens), mean,
                 f.out_path.empty() ? "" : fmt::format(" -> {}", f.out_path).c_str());
  }
  return 0;
}

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
                 {"logprobs", {{"tokens", std::move(tokens)},
                               {"token_logprobs", run.generation.logprobs},
                               {"token_ids", run.generation.ids}}},
                 {"finish_reason", run.generation.finish_reason}};
  Json result = {{"kv", kv},
                 {"choices", Json::array({std::move(choice)})},
                 {"prompt_tokens", prompt.ids.size()},
                 {"dropped_article_tokens", prompt.dropped},
                 {"rouge", rouge(run.vs_reference)},
                 {"rouge_vs_full", rouge(run.vs_full)}};
  return Json{{"request", line.value}, {"result", std::move(result)}};
}

int RunSummarization(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                     std::span<const JsonlLine> lines, std::span<const KvSpec> specs) {
  const int64_t n_ctx = ContextSize(f, model);
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
  // The full-cache generations every policy is compared with; a "full" in
  // the list reuses them (same prompt, options and seed: the same text).
  auto generate_all = [&](const KvSpec& spec, std::vector<SummaryRun>& runs) -> Status {
    ProgressBar progress(spec.text, static_cast<int64_t>(items.size()),
                         ProgressBar::Enabled(f.quiet));
    PolicyRun run(f, model, spec);
    const SessionSource source = run.Source();
    for (size_t i = 0; i < items.size(); ++i) {
      auto session = source(static_cast<int64_t>(prompts[i].ids.size()));
      if (!session.ok()) return session.status().WithContext(lines[i].where);
      auto generation = GenerateUntil(**session, tokenizer, prompts[i].ids, items[i].generation);
      if (!generation.ok()) return generation.status().WithContext(lines[i].where);
      runs.push_back({std::move(generation).value(), {}, {}});
      runs.back().vs_reference = Rouge(runs.back().generation.text, items[i].summary_gt);
      progress.Advance();
    }
    return Status::Ok();
  };
  std::vector<SummaryRun> full;
  if (Status s = generate_all(ParseKvSpec("full").value(), full); !s.ok()) return Fail(s);

  if (!f.json) {
    std::printf("%s: %zu items, summarization, chunk %d%s\n", f.task_path.c_str(), items.size(),
                f.model.chunk, CutNote(truncated, "article", n_ctx).c_str());
  }
  std::string out_lines;
  nlohmann::json rows = nlohmann::json::array();
  for (const KvSpec& spec : specs) {
    std::vector<SummaryRun> runs;
    if (spec.policy == "full") {
      runs = full;
    } else if (Status s = generate_all(spec, runs); !s.ok()) {
      return Fail(s);
    }
    RougeMean vs_reference, vs_full;
    std::vector<std::string> texts;
    int64_t generated = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      runs[i].vs_full = Rouge(runs[i].generation.text, full[i].generation.text);
      vs_reference.Add(runs[i].vs_reference);
      vs_full.Add(runs[i].vs_full);
      texts.push_back(runs[i].generation.text);
      generated += static_cast<int64_t>(runs[i].generation.ids.size());
      if (!f.out_path.empty()) {
        out_lines += SummaryResultLine(lines[i], spec.text, prompts[i], runs[i], tokenizer)
                         .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        out_lines += '\n';
      }
    }
    const RougeF1 ref = vs_reference.Mean(), vsf = vs_full.Mean();
    const double self_bleu = SelfBleu(texts);
    rows.push_back({{"kv", spec.text},
                    {"rouge1", ref.rouge1},
                    {"rouge2", ref.rouge2},
                    {"rougeL", ref.rougeL},
                    {"rouge1_vs_full", vsf.rouge1},
                    {"rouge2_vs_full", vsf.rouge2},
                    {"rougeL_vs_full", vsf.rougeL},
                    {"self_bleu", self_bleu},
                    {"mean_generated_tokens", static_cast<double>(generated) / items.size()},
                    {"n", items.size()}});
  }
  if (!f.out_path.empty()) {
    if (Status s = WriteFileAtomically(f.out_path, out_lines); !s.ok()) return Fail(s);
  }
  if (f.json) {
    const nlohmann::json out = {{"task", f.task_path},
                                {"format", TaskFormatName(TaskFormat::kSummarization)},
                                {"model", f.model.model_path},
                                {"items", items.size()},
                                {"chunk", f.model.chunk},
                                {"kv_type", f.model.kv_type},
                                {"n_ctx", n_ctx},
                                {"seed", f.seed},
                                {"truncated_items", truncated},
                                {"results", rows}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-28s %7s %7s %7s   %-23s %9s\n", "kv", "R-1", "R-2", "R-L", "R-1/2/L vs full",
              "self-BLEU");
  for (const auto& row : rows) {
    std::printf("%-28s %7.4f %7.4f %7.4f   %.4f %.4f %.4f %9.4f\n",
                row["kv"].get<std::string>().c_str(), row["rouge1"].get<double>(),
                row["rouge2"].get<double>(), row["rougeL"].get<double>(),
                row["rouge1_vs_full"].get<double>(), row["rouge2_vs_full"].get<double>(),
                row["rougeL_vs_full"].get<double>(), row["self_bleu"].get<double>());
  }
  return 0;
}

int RunEval(const EvalFlags& f) {
  auto specs = ParseKvList(f.model.kv_spec);
  if (!specs.ok()) return Fail(specs.status().WithContext("--kv"));
  auto read = ReadJsonl(f.task_path);
  if (!read.ok()) return Fail(read.status());
  std::span<const JsonlLine> lines = *read;
  if (f.limit > 0 && static_cast<size_t>(f.limit) < lines.size()) lines = lines.first(f.limit);
  auto format = DetectTaskFormat(lines);
  if (!format.ok()) return Fail(format.status());
  if (f.generate && *format != TaskFormat::kSummarization) {
    return Fail(fmt::format("{}: --generate needs summarization items ({{\"article\", "
                            "\"summary_gt\", ...}}), not {}", f.task_path,
                            TaskFormatName(*format)));
  }
  if (f.shots > 0 && *format != TaskFormat::kMultipleChoice) {
    return Fail(fmt::format("--shots applies to multiple-choice tasks, not {}",
                            TaskFormatName(*format)));
  }
  if (!f.out_path.empty() && *format == TaskFormat::kMultipleChoice) {
    return Fail("--out applies to scoring requests and summarization, not multiple choice");
  }
  auto model = LoadModel(f.model);
  if (!model.ok()) return Fail(model.status());
  auto tokenizer = LoadTokenizer(**model);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  switch (*format) {
    case TaskFormat::kMultipleChoice:
      return RunMultipleChoice(f, **model, *tokenizer, lines, *specs);
    case TaskFormat::kScoreRequests:
      return RunScoreRequests(f, **model, *tokenizer, lines, *specs);
    case TaskFormat::kSummarization:
      return RunSummarization(f, **model, *tokenizer, lines, *specs);
  }
  return 1;
}

}  // namespace

Command RegisterEval(CLI::App& app) {
  auto f = std::make_shared<EvalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "task accuracy per KV policy: multiple choice, H2O-repository scoring requests, "
              "summarization");
  AddModelFlags(*cmd, f->model, /*default_chunk=*/1);
  cmd->add_option("--task", f->task_path,
                  "JSONL task: {context, choices, gold} lines, or the H2O repository's "
                  "{prompt, echo, max_tokens: 0} requests, or {article, summary_gt} items")
      ->required();
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
  cmd->add_flag("--json", f->json, "print the results as JSON");
  cmd->add_flag("-q,--quiet", f->quiet, "no progress or summary on stderr");
  return {cmd, [f] { return RunEval(*f); }};
}

}  // namespace h2o::cli
