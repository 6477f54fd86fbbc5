// h2o eval on long-context retrieval items (`h2o mktask ruler`): every
// policy answers every item greedily with its cache compressed once, as
// NVIDIA kvpress evaluates, and each answer gets RULER's score.
//
// Query-agnostic (the default): the context alone goes through the policy,
// which evicts to its budget; what it kept then continues in a sequence
// that evicts nothing, which takes the question and the answer, so no
// policy sees the question while choosing. Query-aware
// (--question-in-context): context and question go through the policy
// together, the answer is generated on what it kept. Without --chunk the
// compressed part goes in one forward pass (kvpress prefills it whole, then
// compresses); with --chunk N it streams in N-token passes, evicting after
// each.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "eval/retrieval.h"
#include "eval/ruler/tasks.h"
#include "eval/task_format.h"
#include "eval_common.h"
#include "kv/policy_registry.h"
#include "report/json_line.h"
#include "report/progress.h"
#include "report/svg_heatmap.h"
#include "runtime/generate.h"

namespace h2o::cli {
namespace {

// Mean and standard error of scores in [0, 1].
struct Tally {
  double sum = 0, sum_sq = 0;
  int64_t n = 0;
  void Add(double v) {
    sum += v;
    sum_sq += v * v;
    ++n;
  }
  double Mean() const { return n > 0 ? sum / static_cast<double>(n) : std::nan(""); }
  double StdErr() const {
    if (n < 2) return std::nan("");
    const double m = Mean();
    const double var =
        std::max(0.0, (sum_sq - static_cast<double>(n) * m * m) / static_cast<double>(n - 1));
    return std::sqrt(var / static_cast<double>(n));
  }
};

// A run's scores, by what the reports break them down by.
struct RunScores {
  Tally all;
  std::map<std::string, Tally> by_task;
  std::map<int64_t, Tally> by_length;
  std::map<std::pair<std::string, int64_t>, Tally> by_task_length;
  std::map<std::pair<int, int64_t>, Tally> by_depth_length;  // depth in tens of percent
};

// Where an item's prompt is compressed: after its context, or after the
// question too.
size_t CompressAt(const EvalFlags& f, const RetrievalItem& item) {
  return f.question_in_context ? item.ids.size() : item.context_tokens;
}

// The sequence a compressed cache continues in: a local window holding
// every token the largest layer budget keeps plus the rest of the prompt
// and the answer, so it never evicts.
Result<std::unique_ptr<Sequence>> Continuation(Engine& engine, const Sequence& compressed,
                                               const RetrievalItem& item, size_t compress_at,
                                               int64_t n_ctx) {
  const KvCacheConfig& c = compressed.cache().config();
  int32_t kept = 0;
  for (int32_t l = 0; l < c.n_layer; ++l) kept = std::max(kept, c.layer_budget(l));
  const auto rest = static_cast<int32_t>(item.ids.size() - compress_at);
  SequenceOptions o;
  o.n_ctx = static_cast<int32_t>(n_ctx);
  o.max_chunk = std::max(1, rest);
  o.kv_types = c.types;
  H2O_ASSIGN_OR_RETURN(
      o.kv, ResolveKvSpec(
                ParseKvSpec(fmt::format("local:recent={}", kept + rest + item.max_tokens)).value(),
                std::nullopt));
  return engine.NewSequence(o);
}

std::string DepthLabel(int tens) { return fmt::format("{}%", tens * 10); }

// One heatmap per run: needle depth down, length across.
Heatmap DepthHeatmap(const EvalRun& run, const RunScores& scores,
                     const std::vector<int64_t>& lengths) {
  Heatmap map;
  map.title = fmt::format("{}{}: accuracy by needle depth and length", run.kv,
                          run.entry.budget.empty() ? "" : " at " + run.entry.budget);
  map.x_label = "context length (tokens)";
  map.y_label = "needle depth";
  for (const int64_t length : lengths) map.columns.push_back(std::to_string(length));
  for (int tens = 0; tens <= 10; ++tens) {
    std::vector<double> row;
    bool any = false;
    for (const int64_t length : lengths) {
      const auto it = scores.by_depth_length.find({tens, length});
      row.push_back(it == scores.by_depth_length.end() ? std::nan("") : it->second.Mean());
      any = any || it != scores.by_depth_length.end();
    }
    if (!any) continue;
    map.rows.push_back(DepthLabel(tens));
    map.values.push_back(std::move(row));
  }
  return map;
}

std::string FileSafe(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
  }
  return text;
}

// The markdown table of every run by task and length: "acc ± se".
std::string TaskLengthMarkdown(std::span<const EvalRun> runs, std::span<const RunScores> scores,
                               const std::vector<std::string>& tasks,
                               const std::vector<int64_t>& lengths) {
  std::string md = "| kv | budget |";
  std::string rule = "|---|---|";
  for (const std::string& task : tasks) {
    for (const int64_t length : lengths) {
      md += fmt::format(" {} @{} |", task, length);
      rule += "---|";
    }
  }
  md += "\n" + rule + "\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    md += fmt::format("| {} | {} |", runs[r].kv, runs[r].entry.budget);
    for (const std::string& task : tasks) {
      for (const int64_t length : lengths) {
        const auto it = scores[r].by_task_length.find({task, length});
        if (it == scores[r].by_task_length.end()) {
          md += " |";
        } else if (it->second.n < 2) {
          md += fmt::format(" {:.3f} |", it->second.Mean());
        } else {
          md += fmt::format(" {:.3f} ± {:.3f} |", it->second.Mean(), it->second.StdErr());
        }
      }
    }
    md += "\n";
  }
  return md;
}

}  // namespace

int RunRetrieval(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                 std::span<const JsonlLine> lines, std::span<const EvalRun> runs) {
  const int64_t n_ctx = ContextSize(f.model, model);
  if (f.model.kv_pos_shift) {
    return Fail(
        "--kv-pos-shift does not apply to retrieval tasks (their caches are compressed "
        "once, positions kept)");
  }
  if (!f.model.kv_dump_path.empty() && runs.size() != 1) {
    return Fail("--kv-dump takes a single --kv spec and KV type");
  }
  std::vector<RetrievalItem> items;
  size_t longest_compressed = 1;
  for (const JsonlLine& line : lines) {
    auto item = ParseRetrievalItem(line, tokenizer);
    if (!item.ok()) return Fail(item.status());
    const int64_t need = static_cast<int64_t>(item->ids.size()) + item->max_tokens;
    if (need > n_ctx) {
      return Fail(fmt::format(
          "{}: its {} prompt tokens and {} to answer pass the context of {} tokens (-c; the "
          "model was trained on {})",
          line.where, item->ids.size(), item->max_tokens, n_ctx, model.hparams().n_ctx_train));
    }
    longest_compressed = std::max(longest_compressed, CompressAt(f, *item));
    items.push_back(std::move(item).value());
  }
  // One pass per compressed part unless --chunk says otherwise.
  const auto chunk = static_cast<int32_t>(
      f.chunk_given ? EvalChunk(f, model) : std::min<int64_t>(n_ctx, longest_compressed));

  std::vector<RunSequence> sequences;
  for (const EvalRun& run : runs)
    sequences.emplace_back(f, model, run.spec, run.types, false, chunk);
  auto engine =
      Engine::Create(model, {.n_threads = ThreadCount(f.model), .max_batch_tokens = chunk});
  if (!engine.ok()) return Fail(engine.status());
  std::vector<RunScores> scores(runs.size());
  std::string answers;  // PREFIX.answers.jsonl: every answer, as RULER keeps its predictions
  std::vector<std::string> tasks;
  std::vector<int64_t> lengths;
  ProgressBar progress("retrieval", static_cast<int64_t>(items.size()),
                       ProgressBar::Enabled(Quiet()));
  for (size_t i = 0; i < items.size(); ++i) {
    const RetrievalItem& item = items[i];
    const size_t compress_at = CompressAt(f, item);
    std::vector<GenerateJob> jobs(runs.size());
    std::vector<std::unique_ptr<Sequence>> continuations(runs.size());
    for (size_t r = 0; r < runs.size(); ++r) {
      auto sequence = sequences[r].For(**engine, static_cast<int64_t>(item.context_tokens));
      if (!sequence.ok()) return Fail(sequence.status().WithContext(lines[i].where));
      GenerateJob& job = jobs[r];
      job.sequence = *sequence;
      job.prompt = item.ids;
      job.options.max_tokens = item.max_tokens;
      job.options.sampling.temperature = 0.0f;
      job.chunk = chunk;
      if (PolicyEvicts(runs[r].spec.policy)) {
        auto then = Continuation(**engine, **sequence, item, compress_at, n_ctx);
        if (!then.ok()) return Fail(then.status().WithContext(lines[i].where));
        continuations[r] = std::move(then).value();
        job.then = continuations[r].get();
        job.compress_after = compress_at;
      }
    }
    auto generations = GenerateLockstep(**engine, jobs, &tokenizer);
    if (!generations.ok()) return Fail(generations.status().WithContext(lines[i].where));
    // What the policy kept when the question came (query-agnostic: the
    // compressed context; query-aware and full: the end of the run).
    if (!f.model.kv_dump_path.empty() && i + 1 == items.size()) {
      if (Status st = WriteKvDump(jobs.front().sequence->cache(), f.model.kv_dump_path); !st.ok()) {
        return Fail(st);
      }
    }
    const std::string task = item.task.empty() ? "task" : item.task;
    if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) tasks.push_back(task);
    if (std::find(lengths.begin(), lengths.end(), item.length) == lengths.end()) {
      lengths.push_back(item.length);
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      const double score = ruler::Score((*generations)[r].text, item.outputs);
      if (!f.report_prefix.empty()) {
        answers += JsonLine(nlohmann::json{{"item", i},
                                            {"task", task},
                                            {"length", item.length},
                                            {"depth", item.depth},
                                            {"kv", runs[r].label},
                                            {"budget", runs[r].entry.budget},
                                            {"outputs", item.outputs},
                                            {"answer", (*generations)[r].text},
                                            {"score", score}});
      }
      RunScores& s = scores[r];
      s.all.Add(score);
      s.by_task[task].Add(score);
      s.by_length[item.length].Add(score);
      s.by_task_length[{task, item.length}].Add(score);
      if (item.depth >= 0) {
        s.by_depth_length[{static_cast<int>(std::lround(item.depth / 10)), item.length}].Add(score);
      }
    }
    progress.Advance();
  }
  progress.Finish();
  std::sort(lengths.begin(), lengths.end());

  SweepReport report;
  report.title = fmt::format("{} on {} ({} items, {})",
                             std::filesystem::path(f.model.model_path).filename().string(),
                             std::filesystem::path(f.task_path).filename().string(), items.size(),
                             f.question_in_context ? "query-aware" : "query-agnostic");
  report.metrics = {{"accuracy", "accuracy (RULER's score, all items)", 3},
                    {"accuracy_stderr", "its standard error", 3}};
  for (const std::string& task : tasks) {
    report.metrics.push_back({task, fmt::format("accuracy on {}", task), 3});
    report.metrics.push_back({task + "_stderr", "its standard error", 3});
  }
  for (const int64_t length : lengths) {
    report.metrics.push_back(
        {fmt::format("len_{}", length), fmt::format("accuracy at {} tokens", length), 3});
    report.metrics.push_back({fmt::format("len_{}_stderr", length), "its standard error", 3});
  }
  nlohmann::json cells = nlohmann::json::array();
  for (size_t r = 0; r < runs.size(); ++r) {
    const RunScores& s = scores[r];
    std::vector<double> values = {s.all.Mean(), s.all.StdErr()};
    for (const std::string& task : tasks) {
      values.push_back(s.by_task.at(task).Mean());
      values.push_back(s.by_task.at(task).StdErr());
    }
    for (const int64_t length : lengths) {
      values.push_back(s.by_length.at(length).Mean());
      values.push_back(s.by_length.at(length).StdErr());
    }
    report.rows.push_back({runs[r].label, runs[r].entry.budget, runs[r].kv, std::move(values)});
    for (const auto& [key, tally] : s.by_task_length) {
      cells.push_back({{"kv", runs[r].kv},
                       {"budget", runs[r].entry.budget},
                       {"task", key.first},
                       {"length", key.second},
                       {"accuracy", tally.Mean()},
                       {"stderr", tally.n > 1 ? nlohmann::json(tally.StdErr()) : nlohmann::json()},
                       {"n", tally.n}});
    }
  }
  if (!f.json) {
    const std::string passes = f.chunk_given ? fmt::format("{}-token passes", chunk) : "one pass";
    std::printf("%s: %zu items, retrieval, %s, compressed part in %s\n", f.task_path.c_str(),
                items.size(),
                f.question_in_context ? "query-aware (question in context)"
                                      : "query-agnostic (question after compression)",
                passes.c_str());
    std::printf("%-34s %8s %11s %9s %7s\n", "kv", "budget", "compression", "accuracy", "+-");
    for (const SweepRow& row : report.rows) {
      // kvpress's compression ratio: the share of the context not kept.
      std::string ratio = "-";
      if (!row.budget.empty() && row.budget.back() == '%') {
        ratio = fmt::format("{:.3f}", 1.0 - std::stod(row.budget) / 100.0);
      } else if (!PolicyEvicts(row.policy)) {
        ratio = "0";
      }
      std::printf("%-34s %8s %11s %9.3f %7.3f\n", row.kv.c_str(),
                  row.budget.empty() ? "-" : row.budget.c_str(), ratio.c_str(), row.values[0],
                  row.values[1]);
    }
  }
  if (!f.report_prefix.empty()) {
    const std::string tasks_md = f.report_prefix + ".tasks.md";
    if (Status s = WriteFileAtomically(tasks_md,
                                       "# " + report.title + ": accuracy by task and length\n\n" +
                                           TaskLengthMarkdown(runs, scores, tasks, lengths));
        !s.ok()) {
      return Fail(s);
    }
    Note("wrote {}", tasks_md);
    const std::string answers_path = f.report_prefix + ".answers.jsonl";
    if (Status s = WriteFileAtomically(answers_path, answers); !s.ok()) return Fail(s);
    Note("wrote {}", answers_path);
    for (size_t r = 0; r < runs.size(); ++r) {
      const Heatmap map = DepthHeatmap(runs[r], scores[r], lengths);
      if (map.rows.empty()) continue;
      const std::string path =
          fmt::format("{}.depth.{}{}.svg", f.report_prefix, FileSafe(runs[r].label),
                      runs[r].entry.budget.empty() ? "" : "." + FileSafe(runs[r].entry.budget));
      if (Status s = WriteFileAtomically(path, RenderHeatmapSvg(map)); !s.ok()) return Fail(s);
      Note("wrote {}", path);
    }
  }
  return FinishReport(
      f, TaskFormat::kRetrieval, items.size(), n_ctx,
      {{"protocol", f.question_in_context ? "query-aware" : "query-agnostic"},
       {"chunk", f.chunk_given ? nlohmann::json(chunk) : nlohmann::json("one pass")},
       {"cells", std::move(cells)}},
      report);
}

}  // namespace h2o::cli
