// One session per test, sized for it, so that kv_bytes is what a user
// running that sequence would allocate. The depth tokens and the test's
// tokens come from one seeded random stream, the same for every KV spec,
// so specs are compared on identical input. Only the test itself is inside
// the clock; depth filling, Reset and session creation are not. The depth
// is filled once per test: with more than one repetition the state after
// it is saved and restored before each further run (bit-identical to
// refilling, see Session::Save), which makes deep tests -r times cheaper;
// the saved copy of the cache counts in peak_rss_bytes. The warm-up run is
// the test itself, untimed, so that each test's first timed run does not
// pay for paging in what that test touches (its cache, its activations).
#include "perf/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <initializer_list>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

#include <fmt/format.h>

#include "core/strings.h"
#include "kv/kv_cache.h"
#include "runtime/sequence.h"
#include "runtime/session.h"

namespace h2o {
namespace {


double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

size_t MatrixBytes(const WeightMatrix& m) { return static_cast<size_t>(m.rows) * m.row_bytes(); }

std::string TestContext(const KvSpec& spec, const BenchTest& test) {
  return fmt::format("--kv '{}' for {} at depth {} ({} tokens)", spec.text, test.Name(),
                     test.depth, test.total());
}

// The session of one test: n_ctx = depth + n_tokens, the spec resolved
// against that.
Result<SessionOptions> TestSessionOptions(const KvSpec& spec, const BenchTest& test,
                                          const BenchOptions& options) {
  if (test.n_tokens < 1 || test.depth < 0 || test.total() > INT32_MAX) {
    return Status::Error(fmt::format("bad bench test {} at depth {}", test.Name(), test.depth));
  }
  H2O_ASSIGN_OR_RETURN(KvPlan plan, ResolveForTest(spec, test));
  SessionOptions o;
  o.n_ctx = static_cast<int32_t>(test.total());
  o.n_threads = options.n_threads;
  o.max_chunk = options.chunk;
  o.kv_types = options.kv_types;
  o.kv = std::move(plan);
  return o;
}

}  // namespace

Result<std::vector<int32_t>> ParseCountList(std::string_view text, std::string_view flag) {
  std::vector<int32_t> values;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view item =
        Trim(text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin));
    int32_t value = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || value < 0) {
      return Status::Error(
          fmt::format("{}: '{}' is not a non-negative integer (in '{}')", flag, item, text));
    }
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return values;
}

std::string BenchTest::Name() const {
  return fmt::format("{}{}", kind == BenchKind::kPrompt ? "pp" : "tg", n_tokens);
}

ModelFootprint DescribeModel(const Model& model) {
  ModelFootprint f;
  f.arch = model.hparams().arch;
  std::map<TensorType, size_t> bytes_by_type;
  for (const gguf::TensorInfo& t : model.file().tensors()) {
    f.n_params += t.n_elements();
    f.tensor_bytes += t.nbytes;
    if (t.dims.size() >= 2) bytes_by_type[t.type] += t.nbytes;
  }
  size_t most = 0;
  for (const auto& [type, bytes] : bytes_by_type) {
    if (bytes > most) {
      most = bytes;
      f.weight_type = std::string(TraitsOf(type).name);
    }
  }
  const ModelWeights& w = model.weights();
  size_t per_token = 0;
  // Norms and biases are small next to the matrices but read every token.
  auto vectors = [](std::initializer_list<const std::vector<float>*> vs) {
    size_t n = 0;
    for (const std::vector<float>* v : vs) n += v->size();
    return n * sizeof(float);
  };
  auto norm = [&](const NormWeights& n) { return vectors({&n.weight, &n.bias}); };
  for (const LayerWeights& l : w.layers) {
    per_token += MatrixBytes(l.wq) + MatrixBytes(l.wk) + MatrixBytes(l.wv) +
                 MatrixBytes(l.wqkv) + MatrixBytes(l.wo) + MatrixBytes(l.w_gate) +
                 MatrixBytes(l.w_up) + MatrixBytes(l.w_down) + norm(l.attn_norm) +
                 norm(l.attn_post_norm) + norm(l.ffn_norm) + norm(l.ffn_post_norm) +
                 vectors({&l.bq, &l.bk, &l.bv, &l.bo, &l.q_norm, &l.k_norm, &l.b_gate, &l.b_up,
                          &l.b_down});
  }
  per_token += MatrixBytes(w.output) + norm(w.output_norm) + vectors({&w.output_bias});
  if (w.position_embd.data != nullptr) per_token += w.position_embd.row_bytes();
  if (!w.tied_output) per_token += w.token_embd.row_bytes();  // one embedding row
  f.weight_bytes_per_token = per_token;
  return f;
}

double KvBytesReadPerToken(const HParams& hp, const KvTypes& kv_types, double tokens_in_cache) {
  return static_cast<double>(hp.n_layer) * hp.n_head_kv *
         static_cast<double>(kv_types.TokenBytes(hp.head_dim)) *
         tokens_in_cache;
}

std::vector<int32_t> RandomTokens(int32_t n_vocab, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng() % static_cast<uint64_t>(n_vocab));
  return ids;
}

Result<KvPlan> ResolveForTest(const KvSpec& spec, const BenchTest& test) {
  auto plan = ResolveKvSpec(spec, test.total());
  if (!plan.ok()) return plan.status().WithContext(TestContext(spec, test));
  return plan;
}

Status CheckBenchTest(const Model& model, const KvSpec& spec, const BenchTest& test,
                      const BenchOptions& options) {
  H2O_ASSIGN_OR_RETURN(const SessionOptions o, TestSessionOptions(spec, test, options));
  if (auto bytes = Sequence::KvBytes(model, o, /*max_chunk_limit=*/0); !bytes.ok()) {
    return bytes.status().WithContext(TestContext(spec, test));
  }
  return Status::Ok();
}

Status WarmUp(const Model& model, const BenchOptions& options) {
  constexpr int32_t kPrompt = 16, kDecode = 4;
  SessionOptions o;
  o.n_ctx = kPrompt + kDecode;
  o.n_threads = options.n_threads;
  o.max_chunk = options.chunk;
  o.kv_types = options.kv_types;
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(model, o));
  const std::vector<int32_t> ids =
      RandomTokens(model.hparams().n_vocab, kPrompt + kDecode, options.seed);
  H2O_RETURN_IF_ERROR(session->Eval(std::span(ids).first(kPrompt)));
  for (int32_t i = kPrompt; i < kPrompt + kDecode; ++i) {
    H2O_RETURN_IF_ERROR(session->Eval(std::span(ids).subspan(i, 1)));
  }
  return Status::Ok();
}

Result<BenchRecord> RunBenchTest(const Model& model, const KvSpec& spec, const BenchTest& test,
                                 const BenchOptions& options, double membw_gbps) {
  if (options.repetitions < 1) {
    return Status::Error(fmt::format("bad repetition count {}", options.repetitions));
  }
  H2O_ASSIGN_OR_RETURN(const SessionOptions o, TestSessionOptions(spec, test, options));
  BenchRecord r;
  // Best effort: else peak_rss_bytes is the process's peak so far.
  r.peak_rss_per_test = ResetPeakRss();
  const HParams& hp = model.hparams();
  const int32_t total = o.n_ctx;

  auto created = Session::Create(model, o);
  if (!created.ok()) return created.status().WithContext(TestContext(spec, test));
  Session& session = **created;
  const std::vector<int32_t> ids = RandomTokens(hp.n_vocab, total, options.seed);
  const std::span<const int32_t> context = std::span(ids).first(test.depth);
  const std::span<const int32_t> tested = std::span(ids).subspan(test.depth);

  r.test = test;
  r.kv = spec.text;
  r.kv_resolved = o.kv.Describe();
  r.threads = options.n_threads;
  SessionSnapshot after_depth;
  const int32_t untimed = options.warmup ? 1 : 0;
  const int32_t runs = untimed + options.repetitions;
  const bool reuse_depth = !context.empty() && runs > 1;
  for (int32_t run = 0; run < runs; ++run) {
    if (run > 0 && reuse_depth) {
      session.Restore(after_depth);
    } else {
      session.Reset();
      if (!context.empty()) H2O_RETURN_IF_ERROR(session.Eval(context));
      if (reuse_depth) session.Save(after_depth);
    }
    const auto start = std::chrono::steady_clock::now();
    if (test.kind == BenchKind::kPrompt) {
      H2O_RETURN_IF_ERROR(session.Eval(tested));
    } else {
      for (size_t i = 0; i < tested.size(); ++i) {
        H2O_RETURN_IF_ERROR(session.Eval(tested.subspan(i, 1)));
      }
    }
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (run >= untimed) r.tps.push_back(test.n_tokens / std::max(elapsed.count(), 1e-9));
  }
  const auto [lo, hi] = std::minmax_element(r.tps.begin(), r.tps.end());
  r.tps_min = *lo;
  r.tps_max = *hi;
  r.tps_median = Median(r.tps);
  const KvCache& cache = session.cache();
  r.kv_memory = KvMemoryFor(cache.config(), cache.policy());
  r.kv_memory_full = FullKvMemory(cache.config(), total);
  r.kv_bytes = r.kv_memory.total();
  r.kv_bytes_full = r.kv_memory_full.total();
  r.kv_over_full = WhyOverFull(cache.config(), total, r.kv_memory, r.kv_memory_full);
  r.peak_rss_bytes = PeakRssBytes();

  if (test.kind == BenchKind::kGenerate) {
    // Generated token i (position depth + i) is appended before attention,
    // so per KV head it attends to min(depth + i + 1, budget + 1) tokens of
    // a global layer (its own budget under a pyramid; a full cache's budget
    // is n_ctx = total, so the min never binds) and to min(depth + i + 1, W)
    // of a sliding-window layer.
    const KvCacheConfig& c = cache.config();
    double sum = 0;
    for (int64_t i = 0; i < test.n_tokens; ++i) {
      const int64_t seen = test.depth + i + 1;
      for (int32_t l = 0; l < c.n_layer; ++l) {
        const int64_t most = c.windowed(l) ? c.layer_window[l] : int64_t{c.layer_budget(l)} + 1;
        sum += static_cast<double>(std::min(seen, most));
      }
    }
    r.kv_tokens_read = sum / (static_cast<double>(test.n_tokens) * c.n_layer);
    r.bytes_per_token = static_cast<double>(DescribeModel(model).weight_bytes_per_token) +
                        KvBytesReadPerToken(hp, options.kv_types, *r.kv_tokens_read);
    r.achieved_gbps = *r.bytes_per_token * r.tps_median / 1e9;
    if (membw_gbps > 0) r.roofline_tps = membw_gbps * 1e9 / *r.bytes_per_token;
  }
  return r;
}

bool ResetPeakRss() {
  // Linux >= 4.0: writing "5" to clear_refs resets VmHWM to the current RSS.
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

size_t PeakRssBytes() {
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::sscanf(line, "VmHWM: %lld kB", &kib) == 1) break;
    }
    std::fclose(f);
    if (kib >= 0) return static_cast<size_t>(kib) * 1024;
  }
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<size_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace h2o
