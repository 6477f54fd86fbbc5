#include "eval_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "kv/policy_registry.h"

namespace h2o::cli {

Result<std::vector<EvalRun>> ExpandEvalRuns(const EvalFlags& f) {
  auto entries = ExpandKvSweep(f.model.kv_spec, f.budgets);
  if (!entries.ok())
    return f.budgets.empty() ? entries.status().WithContext("--kv") : entries.status();
  H2O_ASSIGN_OR_RETURN(std::vector<KvTypes> types, KvTypeList(f.model));
  std::vector<EvalRun> runs;
  for (KvSweepEntry& entry : *entries) {
    KvSpec spec = ParseKvSpec(entry.spec).value();  // ExpandKvSweep checked it
    // Session::Create says so too, but only once the first row is printed.
    if (f.model.kv_pos_shift) H2O_RETURN_IF_ERROR(CheckPosShift(spec.policy));
    if (!KvSpecUsesPercent(spec)) {
      if (auto plan = ResolveKvSpec(spec, std::nullopt); !plan.ok()) {
        return plan.status().WithContext(fmt::format("--kv '{}'", entry.spec));
      }
    }
    runs.push_back({std::move(entry), std::move(spec), {}, "", ""});
  }
  const size_t n_specs = runs.size();
  for (size_t t = 0; t < types.size(); ++t) {
    for (size_t i = 0; i < n_specs; ++i) {
      if (t > 0) runs.push_back(runs[i]);
      EvalRun& run = runs[t * n_specs + i];
      run.types = types[t];
      KvRunNames names = NameKvRun(run.entry.policy, run.entry.spec, types[t], types.size() > 1);
      run.label = std::move(names.label);
      run.kv = std::move(names.kv);
    }
  }
  return runs;
}

RunSequence::RunSequence(const EvalFlags& f, const Model& model, const KvSpec& spec,
                         const KvTypes& types, bool pos_shift, int32_t chunk)
    : flags_(f.model), per_item_(KvSpecUsesPercent(spec)) {
  flags_.kv_spec = spec.text;
  flags_.kv_type_k = TraitsOf(types.k).name;
  flags_.kv_type_v = TraitsOf(types.v).name;
  flags_.kv_pos_shift = pos_shift;
  // One chunk for all runs, even where --kv-pos-shift would let a chunk
  // pass the context: sequences fed in lockstep share it.
  flags_.chunk = chunk > 0 ? chunk : EvalChunk(f, model);
}

Result<Sequence*> RunSequence::For(Engine& engine, int64_t prompt_len) {
  if (sequence_ == nullptr || (per_item_ && prompt_len != prompt_len_)) {
    sequence_.reset();  // its cache is freed before the next one is made
    H2O_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(flags_, {prompt_len}));
    H2O_ASSIGN_OR_RETURN(sequence_, engine.NewSequence(options));
    prompt_len_ = prompt_len;
    kv_bytes_ = std::max(kv_bytes_, sequence_->cache().AllocatedBytes());
  }
  return sequence_.get();
}

void AddKvMemoryMetricWhenSwept(std::span<const EvalRun> runs,
                                std::span<const size_t> kv_bytes, SweepReport& report) {
  const bool swept = std::any_of(runs.begin(), runs.end(), [&](const EvalRun& run) {
    return !(run.types == runs.front().types);
  });
  if (swept) AddKvMemoryMetric(report, kv_bytes);
}

int32_t EvalChunk(const EvalFlags& f, const Model& model) {
  const int64_t n_ctx = ContextSize(f.model, model);
  return static_cast<int32_t>(f.model.chunk > 0 ? std::min<int64_t>(f.model.chunk, n_ctx) : n_ctx);
}

Result<std::unique_ptr<Engine>> MakeEvalEngine(const EvalFlags& f, const Model& model,
                                               size_t n_sequences) {
  return Engine::Create(model, {.n_threads = ThreadCount(f.model),
                                .max_batch_tokens = EvalChunk(f, model) *
                                                    static_cast<int32_t>(n_sequences)});
}

std::string CutNote(int64_t count, const char* noun, int64_t n_ctx) {
  if (count == 0) return "";
  return fmt::format(", {} {}{} cut from the left to fit {} tokens", count, noun,
                     count == 1 ? "" : "s", n_ctx);
}

nlohmann::json RowJson(const SweepReport& report, const SweepRow& row) {
  nlohmann::json out = {
      {"kv", row.kv},
      {"policy", row.policy},
      {"budget", row.budget.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.budget)}};
  for (size_t m = 0; m < report.metrics.size(); ++m) out[report.metrics[m].name] = row.values[m];
  return out;
}

int FinishReport(const EvalFlags& f, TaskFormat format, size_t n_items, int64_t n_ctx,
                 const nlohmann::json& extra, SweepReport& report) {
  report.meta = {
      {"task", f.task_path}, {"format", TaskFormatName(format)}, {"model", f.model.model_path},
      {"items", n_items},    {"chunk", f.model.chunk},           {"kv_type", KvTypeName(f.model)},
      {"n_ctx", n_ctx}};
  report.meta.update(extra);
  // RunSequence::For's prompt_len.
  report.budget_percent_of = format == TaskFormat::kRetrieval ? "each item's context tokens"
                                                               : "each item's prompt tokens";
  if (!f.report_prefix.empty()) {
    const auto wrote = [](const std::string& path) { Note("wrote {}", path); };
    if (Status s = WriteSweepFiles(report, f.report_prefix, wrote); !s.ok()) return Fail(s);
  }
  if (f.json) {
    nlohmann::json out = report.meta;
    out["results"] = nlohmann::json::array();
    for (const SweepRow& row : report.rows) out["results"].push_back(RowJson(report, row));
    std::printf("%s\n", out.dump(2).c_str());
  } else if (!f.budgets.empty()) {
    std::printf("\n%s", SweepMarkdown(report).c_str());
  }
  return 0;
}

}  // namespace h2o::cli
