#include "perf/throughput.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "perf/bench.h"
#include "runtime/engine.h"
#include "runtime/scheduler.h"

namespace h2o {
namespace {

using Clock = std::chrono::steady_clock;

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The p-th percentile (0..100) by nearest rank; 0 for no values.
double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t rank =
      static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// Each request's sequence: a context of prompt + generate, the spec
// resolved against it.
Result<SequenceOptions> RequestOptions(const KvSpec& spec, const ThroughputOptions& options) {
  const int32_t n_ctx = options.prompt + options.generate;
  auto plan = ResolveKvSpec(spec, n_ctx);
  if (!plan.ok()) {
    return plan.status().WithContext(
        fmt::format("--kv '{}' for {} + {} tokens", spec.text, options.prompt, options.generate));
  }
  SequenceOptions sequence;
  sequence.n_ctx = n_ctx;
  sequence.max_chunk = std::max(1, options.chunk);
  sequence.kv_types = options.kv_types;
  sequence.kv = *plan;
  return sequence;
}

}  // namespace

Result<size_t> ThroughputKvBytes(const Model& model, const KvSpec& spec,
                                 const ThroughputOptions& options) {
  H2O_ASSIGN_OR_RETURN(const SequenceOptions sequence, RequestOptions(spec, options));
  return Sequence::KvBytes(model, sequence, std::max(1, options.chunk));
}

Result<ThroughputRecord> RunThroughput(const Model& model, const KvSpec& spec,
                                       const ThroughputOptions& options) {
  H2O_ASSIGN_OR_RETURN(const SequenceOptions sequence, RequestOptions(spec, options));
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                       Engine::Create(model, {.n_threads = options.n_threads,
                                              .max_batch_tokens = std::max(
                                                  {1, options.chunk, options.batch_tokens})}));
  Scheduler scheduler(
      *engine, {.kv_memory_bytes = options.kv_memory_bytes, .max_queue = options.concurrency});

  ThroughputRecord record;
  record.kv = spec.text;
  record.kv_resolved = sequence.kv.Describe();
  H2O_ASSIGN_OR_RETURN(record.kv_bytes_per_sequence, engine->SequenceKvBytes(sequence));

  struct Times {
    Clock::time_point submitted;
    std::vector<Clock::time_point> tokens;
  };
  std::vector<Times> times(static_cast<size_t>(options.concurrency));
  std::string error;
  ResetPeakRss();
  const Clock::time_point start = Clock::now();
  for (int32_t i = 0; i < options.concurrency; ++i) {
    Request request;
    request.prompt = RandomTokens(model.hparams().n_vocab, static_cast<size_t>(options.prompt),
                                  options.seed + i);
    request.sequence = sequence;
    request.generation.sampling.temperature = 0.0f;
    request.generation.max_tokens = options.generate;
    Times* t = &times[static_cast<size_t>(i)];
    request.on_event = [t, &error](const TokenEvent& e) {
      if (e.finished) {
        if (e.reason == FinishReason::kError) error = e.error;
        return true;
      }
      t->tokens.push_back(Clock::now());
      return true;
    };
    t->submitted = Clock::now();
    H2O_ASSIGN_OR_RETURN(const uint64_t id, scheduler.Submit(std::move(request)));
    (void)id;
  }
  Clock::duration decode_time{};
  int64_t decode_tokens = 0;
  for (;;) {
    const Clock::time_point before = Clock::now();
    if (!scheduler.Step()) break;
    const Scheduler::StepTokens fed = scheduler.last_step();
    if (fed.prefill == 0 && fed.decode > 0) {
      decode_time += Clock::now() - before;
      decode_tokens += fed.decode;
    }
    record.admitted = std::max(record.admitted, scheduler.Stats().running);
  }
  record.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!error.empty()) return Status::Error(error);
  record.peak_rss_bytes = PeakRssBytes();

  std::vector<double> ttft, itl;
  for (const Times& t : times) {
    record.generated += static_cast<int64_t>(t.tokens.size());
    if (t.tokens.empty()) continue;
    ttft.push_back(Millis(t.tokens.front() - t.submitted));
    for (size_t k = 1; k < t.tokens.size(); ++k)
      itl.push_back(Millis(t.tokens[k] - t.tokens[k - 1]));
  }
  record.end_to_end_tps = record.seconds > 0 ? record.generated / record.seconds : 0.0;
  const double decode_seconds = std::chrono::duration<double>(decode_time).count();
  record.decode_tps = decode_seconds > 0 ? decode_tokens / decode_seconds : 0.0;
  record.ttft_p50_ms = Percentile(ttft, 50);
  record.ttft_p99_ms = Percentile(ttft, 99);
  record.itl_p50_ms = Percentile(itl, 50);
  record.itl_p99_ms = Percentile(itl, 99);
  return record;
}

}  // namespace h2o
