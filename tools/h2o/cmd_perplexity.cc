// h2o perplexity: per-token negative log-likelihood of text or token streams
// under one or more KV policies (or a policy x budget sweep), with each
// policy's KL divergence and top-1 agreement against the full cache.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "cli_errors.h"
#include "cli_log.h"
#include "commands.h"
#include "eval/perplexity.h"
#include "kv/kv_budget.h"
#include "kv/kv_report.h"
#include "kv/policy_registry.h"
#include "perplexity_input.h"
#include "report/progress.h"
#include "report/sweep_report.h"

namespace h2o::cli {
namespace {

struct PerplexityFlags {
  ModelFlags model;
  std::string text_file;
  std::vector<std::string> token_files;
  bool json = false;
  int kl = 0;  // > 0: --kl, < 0: --no-kl, 0: on when there are several policies
  bool windowed = false;
  std::string budgets;
  std::string out_prefix;
  bool per_token = false;
};

// One row of the result: a KV spec, its sequence, and its running totals.
struct PolicyRun {
  KvSweepEntry entry;
  KvTypes types;      // its K and V element types
  KvRunNames names;  // for the report: the policy and spec, with the type when swept

  bool per_stream_budget = false;  // percentages: resolved against each stream's length
  std::unique_ptr<Sequence> sequence;
  int64_t sequence_len = -1;  // the stream length a per-stream sequence was made for
  NllResult total;
  double kl_sum = 0.0;
  int64_t top1_agree = 0;
  KvMemory kv;  // the largest any stream's cache allocated (percent budgets differ)
  nlohmann::json per_stream = nlohmann::json::array();
};

struct Setup {
  const Model* model = nullptr;
  const PerplexityFlags* flags = nullptr;
  int32_t n_ctx = 0;  // sequences' context: the window, or -c, or what the longest stream needs
  // Every policy's sequence runs on this one engine, a chunk of all of them
  // per forward pass: the weights are read once for all policies.
  Engine* engine = nullptr;
};

Result<std::unique_ptr<Sequence>> MakeSequence(const Setup& setup, const std::string& spec,
                                               const KvTypes& types, int64_t stream_len,
                                               bool pos_shift) {
  ModelFlags flags = setup.flags->model;
  flags.kv_spec = spec;
  flags.kv_pos_shift = pos_shift;
  flags.kv_type_k = TraitsOf(types.k).name;
  flags.kv_type_v = TraitsOf(types.v).name;
  H2O_ASSIGN_OR_RETURN(SessionOptions options, MakeSessionOptions(flags, {stream_len}));
  options.n_ctx = setup.n_ctx;
  return setup.engine->NewSequence(options);
}

// Percent budgets refer to each stream's own length, so such a policy gets
// a new sequence whenever the length changes; otherwise one sequence serves
// every stream.
Status PrepareSequence(const Setup& setup, PolicyRun& run, int64_t stream_len) {
  if (run.sequence && (!run.per_stream_budget || run.sequence_len == stream_len)) {
    return Status::Ok();
  }
  run.sequence.reset();  // its cache is freed before the next one is made
  H2O_ASSIGN_OR_RETURN(run.sequence, MakeSequence(setup, run.entry.spec, run.types, stream_len,
                                                  setup.flags->model.kv_pos_shift));
  run.sequence_len = stream_len;
  return Status::Ok();
}

nlohmann::json StreamJson(const Stream& s, const StreamScore& score, const PolicyRun& run, bool kl,
                          bool per_token) {
  nlohmann::json row = {{"stream", s.name},
                        {"tokens", score.nll.tokens},
                        {"nll_sum", score.nll.nll_sum},
                        {"ppl", score.nll.perplexity()}};
  if (kl) {
    row["kl"] = score.kl_sum / score.nll.tokens;
    row["top1"] = static_cast<double>(score.top1_agree) / score.nll.tokens;
  }
  if (run.per_stream_budget) row["kv"] = run.sequence->kv_plan().Describe();
  if (per_token) row["nll"] = score.token_nll;
  return row;
}

SweepReport MakeReport(const PerplexityFlags& f, const std::vector<PolicyRun>& runs, bool kl,
                       size_t n_streams) {
  SweepReport report;
  report.title = fmt::format(
      "perplexity of {} on {} {}{}", std::filesystem::path(f.model.model_path).filename().string(),
      n_streams, f.windowed ? "window" : "stream", n_streams == 1 ? "" : "s");
  report.metrics = {{"ppl", "perplexity", 4}};
  const bool types_swept = std::any_of(runs.begin(), runs.end(), [&](const PolicyRun& run) {
    return !(run.types == runs.front().types);
  });
  report.budget_percent_of = f.windowed ? "each window's tokens" : "each stream's tokens";
  if (kl) {
    report.metrics.push_back({"kl", "mean KL(full || policy) per token, nats", 6});
    report.metrics.push_back({"top1", "top-1 agreement with full", 4});
  }
  for (const PolicyRun& run : runs) {
    SweepRow row{run.names.label, run.entry.budget, run.names.kv, {run.total.perplexity()}};
    if (kl) {
      row.values.push_back(run.kl_sum / run.total.tokens);
      row.values.push_back(static_cast<double>(run.top1_agree) / run.total.tokens);
    }
    report.rows.push_back(std::move(row));
  }
  if (types_swept) {
    std::vector<size_t> kv_bytes;
    for (const PolicyRun& run : runs) kv_bytes.push_back(run.kv.total());
    AddKvMemoryMetric(report, kv_bytes);
  }
  report.meta = {{"model", f.model.model_path},
                 {"mode", f.windowed ? "windowed" : "stream"},
                 {"chunk", f.model.chunk},
                 {"kv_type", KvTypeName(f.model)}};
  return report;
}

// Scores every stream with every policy in lockstep (plus a full-cache
// reference for KL when the list has no full run), adding to each run's
// totals, with a progress bar over the tokens fed.
Status ScoreAll(const Setup& setup, const std::vector<Stream>& streams, bool kl, int64_t longest,
                std::vector<PolicyRun>& runs) {
  const PerplexityFlags& f = *setup.flags;
  int64_t total_fed = 0;
  for (const Stream& s : streams) total_fed += static_cast<int64_t>(s.ids.size()) - 1;
  ProgressBar progress("perplexity", total_fed, ProgressBar::Enabled(Quiet()));
  ScoreOptions options;
  options.first_scored = f.windowed ? WindowFirstScored(setup.n_ctx) : 0;
  options.keep_token_nll = f.per_token;
  options.on_chunk = [&progress](int64_t n) { progress.Advance(n); };

  PolicyRun* full_run = nullptr;
  for (PolicyRun& run : runs) {
    if (!PolicyEvicts(run.entry.policy) && full_run == nullptr) full_run = &run;
  }
  std::unique_ptr<Sequence> own_reference;
  if (kl && full_run == nullptr) {
    // Against the full cache of the first --kv-type, which runs first.
    auto ref = MakeSequence(setup, "full", runs.front().types, longest, /*pos_shift=*/false);
    if (!ref.ok()) return ref.status().WithContext("the full-cache reference");
    own_reference = std::move(ref).value();
  }
  for (const Stream& s : streams) {
    std::vector<Sequence*> sequences;
    for (PolicyRun& run : runs) {
      H2O_RETURN_IF_ERROR(
          PrepareSequence(setup, run, static_cast<int64_t>(s.ids.size())).WithContext(s.name));
      sequences.push_back(run.sequence.get());
    }
    Sequence* reference = !kl ? nullptr : full_run ? full_run->sequence.get() : own_reference.get();
    auto scores = ScoreStreamLockstep(*setup.engine, sequences, reference, s.ids, options);
    if (!scores.ok()) return scores.status().WithContext(s.name);
    for (size_t i = 0; i < runs.size(); ++i) {
      PolicyRun& run = runs[i];
      const StreamScore& score = (*scores)[i];
      run.total.Add(score.nll);
      run.kl_sum += score.kl_sum;
      run.top1_agree += score.top1_agree;
      const KvCache& cache = run.sequence->cache();
      const KvMemory kv = KvMemoryFor(cache.config(), cache.policy());
      if (kv.total() > run.kv.total()) run.kv = kv;
      run.per_stream.push_back(StreamJson(s, score, run, kl, f.per_token));
    }
  }
  return Status::Ok();
}

nlohmann::json ResultJson(const PerplexityFlags& f, int32_t n_ctx, int64_t longest, bool kl,
                          std::vector<PolicyRun>& runs) {
  nlohmann::json policies = nlohmann::json::array();
  for (PolicyRun& run : runs) {
    const auto or_null = [](bool present, nlohmann::json value) {
      return present ? std::move(value) : nlohmann::json(nullptr);
    };
    nlohmann::json row = {
        {"kv", run.entry.spec},
        {"policy", run.entry.policy},
        {"kv_type", run.types.Name()},
        {"kv_type_k", std::string(TraitsOf(run.types.k).name)},
        {"kv_type_v", std::string(TraitsOf(run.types.v).name)},
        {"budget", or_null(!run.entry.budget.empty(), run.entry.budget)},
        // Percent budgets resolve per stream: see per_stream[].kv.
        {"resolved", or_null(!run.per_stream_budget, run.sequence->kv_plan().Describe())},
        {"tokens", run.total.tokens},
        {"nll_sum", run.total.nll_sum},
        {"ppl", run.total.perplexity()},
        {"ppl_err", run.total.perplexity_error()},
    };
    if (kl) {
      row["kl"] = run.kl_sum / run.total.tokens;
      row["top1"] = static_cast<double>(run.top1_agree) / run.total.tokens;
    }
    // The figures of the stderr line (kv/kv_report.h), totals and parts.
    const KvMemory full = FullKvMemory(run.sequence->cache().config(), longest);
    row["kv_bytes"] = run.kv.total();
    row["kv_row_bytes"] = run.kv.rows;
    row["kv_bookkeeping_bytes"] = run.kv.bookkeeping;
    row["kv_bytes_full"] = full.total();
    row["kv_full_row_bytes"] = full.rows;
    row["kv_full_bookkeeping_bytes"] = full.bookkeeping;
    row["per_stream"] = std::move(run.per_stream);
    policies.push_back(std::move(row));
  }
  return {{"model", f.model.model_path},
          {"mode", f.windowed ? "windowed" : "stream"},
          {"n_ctx", n_ctx},
          {"chunk", runs.front().sequence->max_chunk()},
          {"kv_type", KvTypeName(f.model)},
          {"pos_shift", f.model.kv_pos_shift},
          {"policies", std::move(policies)}};
}

// One policy as text: a line per stream, the total, the comparison with
// the full cache when asked for, and the KV memory on stderr.
void PrintOneRun(const PolicyRun& run, bool kl, int64_t longest) {
  for (const nlohmann::json& row : run.per_stream) {
    std::printf("%-24s tokens %6lld  nll_sum %12.5f  ppl %8.4f\n",
                row["stream"].get<std::string>().c_str(), row["tokens"].get<long long>(),
                row["nll_sum"].get<double>(), row["ppl"].get<double>());
  }
  std::printf("total: %lld tokens, nll_sum %.5f, mean nll %.5f, ppl %.4f +/- %.5f\n",
              static_cast<long long>(run.total.tokens), run.total.nll_sum, run.total.mean(),
              run.total.perplexity(), run.total.perplexity_error());
  if (kl) {
    std::printf("against the full cache: mean KL %.6f nats per token, top-1 agreement %.4f\n",
                run.kl_sum / run.total.tokens,
                static_cast<double>(run.top1_agree) / run.total.tokens);
  }
  Note(DescribeKvMemory(*run.sequence, longest));
}

// Tokens of one chunk attend to each other before anything is evicted, so
// a chunk as long as the input scores an evicting policy as the full cache.
void WarnWhenChunkCoversInput(const std::vector<PolicyRun>& runs, int32_t chunk, int64_t longest) {
  if (chunk < longest) return;
  for (const PolicyRun& run : runs) {
    if (!PolicyEvicts(run.entry.policy)) continue;
    Warn("-b/--chunk {} covers the whole {}-token input: every token is scored before anything "
         "is evicted, so '{}' gives what the full cache gives (use a smaller -b)",
         chunk, longest, run.entry.spec);
  }
}

int RunPerplexity(const PerplexityFlags& f) {
  auto entries = ExpandKvSweep(f.model.kv_spec, f.budgets);
  if (!entries.ok()) {
    return Fail(f.budgets.empty() ? entries.status().WithContext("--kv") : entries.status());
  }
  auto types = KvTypeList(f.model);
  if (!types.ok()) return Fail(types.status());
  {  // the flags of the model, before it loads
    ModelFlags plain = f.model;
    plain.kv_spec = "full";
    plain.kv_type = TraitsOf(types->front().k).name;
    plain.kv_pos_shift = false;
    if (auto options = MakeSessionOptions(plain, {}); !options.ok()) {
      return Fail(options.status());
    }
  }
  if (!f.model.kv_dump_path.empty() && entries->size() * types->size() > 1) {
    return Fail("--kv-dump takes a single --kv spec and KV type");
  }
  if (!f.out_prefix.empty()) {
    if (Status st = CheckWritable(f.out_prefix + ".json", "--report"); !st.ok()) return Fail(st);
  }
  if (f.per_token && !f.json) Warn("--per-token lists each token's nll in --json output only");
  const bool kl = f.kl > 0 || (f.kl == 0 && entries->size() * types->size() > 1);
  std::vector<PolicyRun> runs;
  std::vector<bool> uses_percent;  // per entry
  for (const KvSweepEntry& e : *entries) {
    // Budgets in tokens are checked now, before the model loads;
    // percentages need each stream's length.
    const KvSpec spec = ParseKvSpec(e.spec).value();
    uses_percent.push_back(KvSpecUsesPercent(spec));
    if (!uses_percent.back()) {
      if (auto plan = ResolveKvSpec(spec, std::nullopt); !plan.ok()) {
        return Fail(plan.status().WithContext(entries->size() > 1 ? fmt::format("--kv '{}'", e.spec)
                                                                  : "--kv"));
      }
    }
  }
  // Every policy at the first type, then every policy at the next, ...:
  // the first full run is the KL reference.
  for (const KvTypes& kv_types : *types) {
    for (size_t i = 0; i < entries->size(); ++i) {
      const KvSweepEntry& e = (*entries)[i];
      PolicyRun& run = runs.emplace_back();
      run.per_stream_budget = uses_percent[i];
      run.entry = e;
      run.types = kv_types;
      run.names = NameKvRun(e.policy, e.spec, kv_types, types->size() > 1);
    }
  }

  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  Setup setup{&model, &f, f.model.n_ctx};
  if (f.windowed && setup.n_ctx == 0) setup.n_ctx = model.hparams().n_ctx_train;
  if (f.windowed && setup.n_ctx < 3) {
    return Fail(fmt::format("the windowed mode needs -c of at least 3 (got {})", setup.n_ctx));
  }
  auto streams = f.windowed ? ReadWindows(f.text_file, f.token_files, model, setup.n_ctx)
                            : ReadStreams(f.text_file, f.token_files, model);
  if (!streams.ok()) return Fail(streams.status());
  int64_t longest = 0;
  for (const Stream& s : *streams) longest = std::max<int64_t>(longest, s.ids.size());
  if (setup.n_ctx == 0) setup.n_ctx = std::max<int64_t>(model.hparams().n_ctx_train, longest);
  // A chunk of every policy's sequence (and the reference's) per pass.
  const int32_t chunk = f.model.chunk > 0 ? std::min(f.model.chunk, setup.n_ctx) : setup.n_ctx;
  WarnWhenChunkCoversInput(runs, chunk, longest);
  auto engine = Engine::Create(
      model, {.n_threads = ThreadCount(f.model),
              .max_batch_tokens = chunk * static_cast<int32_t>(runs.size() + (kl ? 1 : 0))});
  if (!engine.ok()) return Fail(engine.status());
  setup.engine = engine->get();
  if (Status st = ScoreAll(setup, *streams, kl, longest, runs); !st.ok()) return Fail(st);
  if (!f.model.kv_dump_path.empty()) {
    if (Status st = WriteKvDump(runs.back().sequence->cache(), f.model.kv_dump_path); !st.ok()) {
      return Fail(st);
    }
  }

  const SweepReport report = MakeReport(f, runs, kl, streams->size());
  if (!f.out_prefix.empty()) {
    const auto wrote = [](const std::string& path) { Note("wrote {}", path); };
    if (Status st = WriteSweepFiles(report, f.out_prefix, wrote); !st.ok()) return Fail(st);
  }
  if (f.json) {
    std::printf("%s\n", ResultJson(f, setup.n_ctx, longest, kl, runs).dump(2).c_str());
  } else if (runs.size() > 1) {
    std::printf("%s", SweepMarkdown(report).c_str());
  } else {
    PrintOneRun(runs.front(), kl, longest);
  }
  return 0;
}

}  // namespace

Command RegisterPerplexity(CLI::App& app) {
  auto f = std::make_shared<PerplexityFlags>();
  CLI::App* cmd = app.add_subcommand(
      "perplexity",
      "negative log-likelihood of every next token, per KV policy, against the full cache");
  AddModelFlags(*cmd, f->model, /*default_chunk=*/1, /*kv_type_list=*/true);
  // --kv here takes a list; the shared flag's help says so only for one spec.
  cmd->get_option("--kv")->description(
      "KV spec(s), comma-separated, one result row each, e.g. full,h2o:heavy=10%,recent=10%; "
      "with --budget: policies without their budget keys, e.g. full,local,h2o,h2o:score=mean");
  auto* text =
      cmd->add_option("-f,--file", f->text_file, "text file (-: standard input); documents separated by <|endoftext|>");
  auto* ids = cmd->add_option("--token-file", f->token_files,
                              "token-id file(s): one stream per line, ids separated by spaces");
  text->excludes(ids);
  cmd->add_option("--budget", f->budgets,
                  "sweep: run every --kv policy at each budget, e.g. 4%,10%,20%,60% or 32,64,128 "
                  "(h2o: half heavy, half recent; sink: 4 sinks + recent; full runs once)");
  CheckKvSweepWhenParsed(*cmd, &f->model.kv_spec, &f->budgets);
  cmd->add_flag("--kl,!--no-kl", f->kl,
                "compare each policy's next-token distribution with the full cache's (mean KL, "
                "top-1 agreement); on by default with more than one policy");
  cmd->add_flag("--windowed", f->windowed,
                "llama-perplexity's method: the whole input as one sequence, cut into -c token "
                "windows, each from an empty cache with BOS first, scoring the second half");
  // --report as in eval; --out, its first name, stays an alias.
  cmd->add_option("--report,--out", f->out_prefix,
                  "write the table as PREFIX.md, PREFIX.csv and PREFIX.json, and with --budget a "
                  "plot per metric: PREFIX.svg (ppl), PREFIX.kl.svg, PREFIX.top1.svg");
  cmd->add_flag("--per-token", f->per_token, "--json: list each scored token's nll per stream");
  cmd->add_flag("--json", f->json, "print JSON (per policy: totals and per-stream results)");
  RequireEither(*cmd, "--file", "--token-file", "an input (-f TEXT or --token-file IDS)");
  return {cmd, [f] { return RunPerplexity(*f); }};
}

}  // namespace h2o::cli
