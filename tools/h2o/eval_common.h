// What the `h2o eval` task runners share: the flags, the runs of --kv (a
// list, or policies x --budget), a sequence per run on one engine, and the way
// results are printed and written. One runner per task format:
// eval_choice.cc, eval_requests.cc, eval_summarize.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "cli_common.h"
#include "cli_log.h"
#include "core/status.h"
#include "eval/jsonl.h"
#include "eval/task_format.h"
#include "kv/kv_budget.h"
#include "kv/kv_spec.h"
#include "report/sweep_report.h"
#include "runtime/engine.h"
#include "runtime/sequence.h"

namespace h2o::cli {

struct EvalFlags {
  ModelFlags model;
  std::string task_path;
  std::string budgets;        // --budget list; empty: --kv is a plain spec list
  std::string report_prefix;  // --report: PREFIX.md/.csv/.json(/.svg)
  int32_t shots = 0;
  int64_t limit = 0;
  bool generate = false;
  std::string out_path;
  float temperature = -1;  // < 0: each item's own
  uint64_t seed = 0;
  bool json = false;
  bool question_in_context = false;  // retrieval: the query-aware protocol
  bool chunk_given = false;          // -b/--chunk was on the command line
};

// One row of the results: a policy at a budget.
struct EvalRun {
  KvSweepEntry entry;  // policy, budget label ("" without --budget), spec text
  KvSpec spec;
  KvTypes types;  // K and V element types (one of the --kv-type list)
  // For the report: the policy and the spec, each followed by the KV type
  // when more than one --kv-type is swept ("h2o q8_0").
  std::string label, kv;
};

// Expands --kv (and --budget) at each --kv-type (every spec at the first
// type, then at the next, ...) and checks every spec; token budgets are
// resolved now, percentages later against each item's prompt length.
Result<std::vector<EvalRun>> ExpandEvalRuns(const EvalFlags& f);

// The sequence of one run on the engine every run shares: percent budgets
// resolve against each item's prompt, so such a run gets a new sequence
// whenever the prompt length changes; the others one for all items. Every
// run's sequences take chunks of EvalChunk tokens.
class RunSequence {
 public:
  // pos_shift: --kv-pos-shift for this run (false for the full-cache
  // reference the runs are compared with). chunk: the sequences' max_chunk
  // (0: EvalChunk).
  RunSequence(const EvalFlags& f, const Model& model, const KvSpec& spec, const KvTypes& types,
              bool pos_shift, int32_t chunk = 0);
  // The sequence for an item whose prompt has prompt_len tokens; valid
  // until the next call. Errors: bad --kv or --kv-type, one line.
  Result<Sequence*> For(Engine& engine, int64_t prompt_len);
  // The most KV memory any of its sequences allocated (KvCache::AllocatedBytes).
  size_t kv_bytes() const { return kv_bytes_; }

 private:
  ModelFlags flags_;
  bool per_item_;
  int64_t prompt_len_ = -1;  // what a per-item sequence was made for
  std::unique_ptr<Sequence> sequence_;
  size_t kv_bytes_ = 0;
};

// When the runs span more than one --kv-type: the KV memory of each run
// (kv_bytes, in run order, as RunSequence::kv_bytes) as a metric "kv_mib"
// appended to report's rows, and the report's x_metric, so that its plots
// show each metric against KV memory too. Rows must be in run order.
void AddKvMemoryMetricWhenSwept(std::span<const EvalRun> runs,
                                std::span<const size_t> kv_bytes, SweepReport& report);

// Tokens per forward pass of each sequence: --chunk, at most the context
// (0: the whole context).
int32_t EvalChunk(const EvalFlags& f, const Model& model);

// The engine the runs of a task share: each forward pass takes a chunk of
// each of n_sequences sequences, so the weights are read once for all.
Result<std::unique_ptr<Engine>> MakeEvalEngine(const EvalFlags& f, const Model& model,
                                               size_t n_sequences);

// ", 3 contexts cut from the left to fit 512 tokens", or "" for none.
std::string CutNote(int64_t count, const char* noun, int64_t n_ctx);

// A report row's JSON: {"kv", "policy", "budget" (null without one),
// metric: value, ...}.
nlohmann::json RowJson(const SweepReport& report, const SweepRow& row);

// Sets report.meta to what every run states (task, format, model, items,
// chunk, kv_type, n_ctx) plus `extra` (the format's own: shots, seed, ...),
// writes the --report files, then prints that with "results" (one RowJson
// per row) as JSON with --json, or else with --budget the policies x
// budgets tables (markdown). Returns the exit code.
int FinishReport(const EvalFlags& f, TaskFormat format, size_t n_items, int64_t n_ctx,
                 const nlohmann::json& extra, SweepReport& report);

int RunMultipleChoice(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                      std::span<const JsonlLine> lines, std::span<const EvalRun> runs);
int RunScoreRequests(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                     std::span<const JsonlLine> lines, std::span<const EvalRun> runs);
int RunSummarization(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                     std::span<const JsonlLine> lines, std::span<const EvalRun> runs);
int RunRetrieval(const EvalFlags& f, const Model& model, const Tokenizer& tokenizer,
                 std::span<const JsonlLine> lines, std::span<const EvalRun> runs);

}  // namespace h2o::cli
