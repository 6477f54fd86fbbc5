// Speed measurement behind `h2o bench` (in the manner of llama-bench): the
// time to process a prompt ("pp<P>") and to generate tokens one at a time
// ("tg<N>") after a context of `depth` tokens, per KV policy, with the
// memory the cache takes and decode speed against the memory-bandwidth
// roofline (DESIGN.md section 6). Independent of the command line; the
// caller prints the records.
//
// Percent budgets (h2o:heavy=10%,recent=10%) resolve against depth + the
// test's own token count: the length of the whole sequence at the end of
// the test, i.e. what a user's prompt + generation would be.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor_type.h"
#include "kv/kv_report.h"
#include "kv/kv_spec.h"
#include "model/model.h"

namespace h2o {


// Parses a comma-separated list of non-negative int32 counts ("512,2048").
// `flag` names the list in errors: "-p: 'x' is not a non-negative integer".
Result<std::vector<int32_t>> ParseCountList(std::string_view text, std::string_view flag);

enum class BenchKind { kPrompt, kGenerate };

struct BenchTest {
  BenchKind kind = BenchKind::kPrompt;
  int32_t n_tokens = 0;      // P for pp, N for tg; >= 1
  int32_t depth = 0;         // context tokens fed (untimed) before the test
  std::string Name() const;  // "pp512", "tg128"
  int64_t total() const { return static_cast<int64_t>(depth) + n_tokens; }
};

struct BenchOptions {
  int32_t n_threads = 1;
  int32_t chunk = 512;  // tokens per forward pass for depth filling and pp (0: all at once)
  KvTypes kv_types;     // K and V element types (default f16)
  int32_t repetitions = 3;  // >= 1, timed
  bool warmup = true;       // one untimed run of the test before the timed ones
  uint64_t seed = 1234;     // of the random token stream
};

// What one decoded token reads of the model: every weight matrix and norm
// once, plus one row of token_embd (all of it when the output is tied to
// it). Also the file's totals for the report.
struct ModelFootprint {
  std::string arch;
  std::string weight_type;  // the type holding most weight bytes, e.g. "q8_0"
  int64_t n_params = 0;     // elements of every tensor in the file
  size_t tensor_bytes = 0;  // bytes of every tensor in the file
  size_t weight_bytes_per_token = 0;
};
ModelFootprint DescribeModel(const Model& model);

// K and V bytes attention reads for one query when each of the model's
// (layer, KV head) holds `tokens_in_cache` tokens:
// n_layer * n_head_kv * kv_types.TokenBytes(head_dim) * tokens_in_cache.
double KvBytesReadPerToken(const HParams& hp, const KvTypes& kv_types, double tokens_in_cache);

struct BenchRecord {
  BenchTest test;
  std::string kv;           // the spec as given
  std::string kv_resolved;  // KvPlan::Describe() at depth + n_tokens
  std::vector<double> tps;  // tokens per second, one per timed repetition, in run order
  double tps_min = 0;
  double tps_median = 0;
  double tps_max = 0;
  // The KV figure of every command (kv/kv_report.h): the session's cache,
  // and a full cache of depth + n_tokens tokens counted the same way
  // (sliding-window layers at min(depth + n_tokens, W)); kv_bytes and
  // kv_bytes_full are their totals. kv_over_full: WhyOverFull, "" unless
  // the cache needs more than the full one.
  KvMemory kv_memory;
  KvMemory kv_memory_full;
  size_t kv_bytes = 0;
  size_t kv_bytes_full = 0;
  std::string kv_over_full;
  // Peak RSS of the process during this test (session, depth filling, the
  // warm-up and the timed runs; the mapped weights count once touched).
  // peak_rss_per_test false: the kernel could not reset the peak, so this
  // is the process's peak so far, at the end of the test.
  size_t peak_rss_bytes = 0;
  bool peak_rss_per_test = false;
  int32_t threads = 0;
  // tg only (nullopt for pp): mean tokens per (layer, KV head) that a
  // generated token attends to (a sliding-window layer: at most W); weights
  // + KV bytes read per generated token; bytes_per_token * tps_median;
  // membw / bytes_per_token (nullopt also when no bandwidth was measured).
  std::optional<double> kv_tokens_read;
  std::optional<double> bytes_per_token;
  std::optional<double> achieved_gbps;
  std::optional<double> roofline_tps;
};

// `n` token ids uniform in [0, n_vocab), the same for the same seed.
std::vector<int32_t> RandomTokens(int32_t n_vocab, size_t n, uint64_t seed);

// Resolves the spec for the test (percentages against test.total()).
// Errors name the spec and the length it was resolved against.
Result<KvPlan> ResolveForTest(const KvSpec& spec, const BenchTest& test);

// Runs a short full-cache prompt and a few decode steps, untimed, so the
// weights are paged in and the threads have started once.
Status WarmUp(const Model& model, const BenchOptions& options);

// Whether RunBenchTest can run this test with this spec, without
// allocating: the spec resolves and the model takes the session (e.g. the
// context fits a model with learned positions). Errors name the spec and
// the test, as ResolveForTest's.
Status CheckBenchTest(const Model& model, const KvSpec& spec, const BenchTest& test,
                      const BenchOptions& options);

// Runs one test in one session sized for it (n_ctx = depth + n_tokens,
// chunk = options.chunk): with options.warmup once untimed, then
// `repetitions` times timed. Each run resets the session, feeds `depth`
// random tokens untimed (evicting over the budget after each chunk), then
// runs the test: one Eval of n_tokens tokens (pp) or n_tokens Evals of one
// token (tg). membw_gbps <= 0: no roofline.
// Errors: those of CheckBenchTest, or a session error.
Result<BenchRecord> RunBenchTest(const Model& model, const KvSpec& spec, const BenchTest& test,
                                 const BenchOptions& options, double membw_gbps);

// The process's peak resident set size in bytes since start or the last
// successful ResetPeakRss (VmHWM; getrusage ru_maxrss where /proc is
// missing). ResetPeakRss returns whether the kernel reset the peak to the
// current RSS (Linux >= 4.0).
size_t PeakRssBytes();
bool ResetPeakRss();

}  // namespace h2o
