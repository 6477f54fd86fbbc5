// `h2o bench --concurrency N`: many requests through the Scheduler under one
// KV memory limit, the paper's system claim measured: how many sequences a
// policy admits at once, and the throughput and latency that gives.
// Independent of the command line; the caller prints the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/tensor_type.h"
#include "kv/kv_spec.h"
#include "kv/kv_types.h"
#include "model/model.h"

namespace h2o {

struct ThroughputOptions {
  int32_t concurrency = 8;  // requests submitted at once
  int32_t prompt = 512;     // tokens of each (random) prompt, >= 1
  int32_t generate = 128;   // tokens each request generates, >= 1
  size_t kv_memory_bytes = size_t{1} << 30;
  int32_t n_threads = 1;
  int32_t chunk = 512;         // prompt tokens per sequence per step
  int32_t batch_tokens = 512;  // tokens per step, all sequences together (>= chunk)
  KvTypes kv_types;  // K and V element types (default f16)
  uint64_t seed = 1234;  // of the prompts (request i: seed + i)
};

struct ThroughputRecord {
  std::string kv;                    // the spec as given
  std::string kv_resolved;           // against prompt + generate
  size_t kv_bytes_per_sequence = 0;  // each request's reservation
  int32_t admitted = 0;              // most sequences running at once
  double seconds = 0;                // first submit to last finish
  int64_t generated = 0;             // tokens, all requests
  // Generated tokens per second over the steps that only decoded (every
  // running sequence's next token, no prompt), and over the whole run.
  double decode_tps = 0;
  double end_to_end_tps = 0;
  double ttft_p50_ms = 0, ttft_p99_ms = 0;  // submit to first token
  double itl_p50_ms = 0, itl_p99_ms = 0;    // between a request's tokens
  size_t peak_rss_bytes = 0;
};

// The KV bytes each request of `spec` reserves (its cache), so a caller can
// refuse a limit no request fits before running anything. Errors: the spec
// does not resolve, bad sequence options.
Result<size_t> ThroughputKvBytes(const Model& model, const KvSpec& spec,
                                 const ThroughputOptions& options);

// Submits `concurrency` requests of random prompts under `spec` (percent
// budgets of prompt + generate; greedy, no end-of-generation token, so each
// generates exactly `generate`), runs the scheduler until all are done,
// and measures. Errors: the spec does not resolve, a request whose cache
// is larger than the whole limit, or a scheduler error.
Result<ThroughputRecord> RunThroughput(const Model& model, const KvSpec& spec,
                                       const ThroughputOptions& options);

}  // namespace h2o
