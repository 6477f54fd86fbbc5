// h2o bench: prompt processing (pp) and generation (tg) speed at given
// context depths, per KV policy, like llama-bench; with KV memory against a
// full cache and decode speed against the memory-bandwidth roofline.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_conversation.h"
#include "bench_output.h"
#include "cli_common.h"
#include "cli_log.h"
#include "commands.h"
#include "core/byte_size.h"
#include "kernels/dispatch.h"
#include "perf/bench.h"
#include "perf/membw.h"
#include "perf/throughput.h"

namespace h2o::cli {
namespace {

struct BenchFlags {
  std::string model_path;
  std::vector<std::string> prompt = {"512"};
  std::vector<std::string> gen = {"128"};
  std::vector<std::string> depth = {"0"};
  std::vector<std::string> kv = {"full"};
  int32_t repetitions = 3;
  int32_t n_threads = 0;
  int32_t chunk = 512;
  std::string kv_type = "f16";
  std::string kv_type_k, kv_type_v;  // -ctk/-ctv; empty: kv_type
  uint64_t seed = 1234;
  int32_t membw_mib = 256;
  std::string output = "md";  // -o: md, json or jsonl
  bool json = false;           // --json: -o json
  bool warmup = true;
  int32_t concurrency = 0;  // > 0 (or fill): the throughput mode
  bool fill = false;        // as many requests as fit in the KV memory, per policy
  int32_t kv_mem_full = 0;  // > 0: the KV memory is this many full caches' reservations
  std::string kv_mem = "1GiB";
  int32_t batch_tokens = 512;
  bool no_repack = false;
  int32_t conversations = 0;  // > 0: the conversation mode
  int32_t turns = 10;
  std::string cache_ram = "1GiB";
  std::string prompt_cache = "both";
};

// Each occurrence of a list flag is itself a comma-separated list.
Result<std::vector<int32_t>> ParseCounts(const std::vector<std::string>& texts,
                                         std::string_view flag) {
  std::vector<int32_t> all;
  for (const std::string& text : texts) {
    H2O_ASSIGN_OR_RETURN(std::vector<int32_t> values, ParseCountList(text, flag));
    all.insert(all.end(), values.begin(), values.end());
  }
  return all;
}

Output OutputOf(const BenchFlags& f) {
  if (f.json || f.output == "json") return Output::kJson;
  return f.output == "jsonl" ? Output::kJsonl : Output::kMarkdown;
}

// why_skipped: per cell, "" or why it cannot run. Each skipped cell gets a
// note on stderr; when none can run the command fails instead (the error's
// exit code), since a table of skipped rows is no result.
std::optional<int> NoteSkippedCells(const std::vector<std::string>& why_skipped) {
  const auto skipped = static_cast<size_t>(
      std::count_if(why_skipped.begin(), why_skipped.end(),
                    [](const std::string& why) { return !why.empty(); }));
  if (skipped == 0) return std::nullopt;
  if (skipped == why_skipped.size()) {
    return Fail(skipped == 1 ? fmt::format("nothing to run: {}", why_skipped.front())
                             : fmt::format("nothing to run: all {} tests are invalid, the "
                                           "first: {}",
                                           skipped, why_skipped.front()));
  }
  for (const std::string& why : why_skipped) {
    if (!why.empty()) std::fprintf(stderr, "h2o: note: skipping %s\n", why.c_str());
  }
  return std::nullopt;
}

nlohmann::json SkippedRecord(nlohmann::json cell, const std::string& why) {
  cell["skipped"] = true;
  cell["skip_reason"] = why;
  return cell;
}

nlohmann::json OrNull(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string FormatCount(int64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f}B", n / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.2f}M", n / 1e6);
  if (n >= 1'000) return fmt::format("{:.2f}K", n / 1e3);
  return std::to_string(n);
}

// --concurrency: every --kv policy serves `concurrency` requests of -p
// prompt + -n generated tokens through the scheduler under --kv-mem
// (--fill: as many as the memory holds at once, per policy; --kv-mem-full
// N: the memory N full caches reserve, the comparison at a fixed memory).
int RunThroughputMode(const BenchFlags& f, const std::vector<KvSpec>& specs, int32_t prompt,
                      int32_t gen, const BenchOptions& bench) {
  auto kv_mem = ParseByteSize(f.kv_mem);
  if (!kv_mem.ok()) return Fail(kv_mem.status().WithContext("--kv-mem"));
  if (f.kv_mem_full < 0) {
    return Fail(fmt::format("--kv-mem-full must be 1 or more, not {}", f.kv_mem_full));
  }
  ThroughputOptions o;
  o.concurrency = f.concurrency;
  o.prompt = prompt;
  o.generate = gen;
  o.kv_memory_bytes = *kv_mem;
  o.n_threads = bench.n_threads;
  o.chunk = bench.chunk > 0 ? bench.chunk : prompt;
  o.batch_tokens = std::max(f.batch_tokens, o.chunk);
  o.kv_types = bench.kv_types;
  o.seed = bench.seed;
  auto model_result =
      Model::Load(f.model_path, {.repack = !f.no_repack, .n_threads = bench.n_threads});
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  if (Status s = CheckKvTypes(o.kv_types, model.hparams().head_dim); !s.ok()) return Fail(s);
  if (f.kv_mem_full > 0) {
    auto full = ThroughputKvBytes(model, ParseKvSpec("full").value(), o);
    if (!full.ok()) return Fail(full.status());
    *kv_mem = *full * static_cast<size_t>(f.kv_mem_full);
  }
  std::vector<int32_t> requests(specs.size());
  std::vector<std::string> why_skipped(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    auto bytes = ThroughputKvBytes(model, specs[i], o);
    if (!bytes.ok()) {
      why_skipped[i] = bytes.status().WithContext(fmt::format("--kv '{}'", specs[i].text)).message();
    } else if (*bytes > *kv_mem) {
      why_skipped[i] = fmt::format(
          "--kv '{}': a request's KV cache ({}) is larger than the whole KV memory limit (--kv-mem "
          "{})",
          specs[i].text, FormatBytes(static_cast<double>(*bytes)),
          FormatBytes(static_cast<double>(*kv_mem)));
    } else {
      requests[i] = f.fill ? static_cast<int32_t>(std::min<size_t>(*kv_mem / *bytes, 4096))
                           : f.concurrency;
    }
  }
  if (auto failed = NoteSkippedCells(why_skipped)) return *failed;
  if (bench.warmup) {
    if (Status s = WarmUp(model, bench); !s.ok()) return Fail(s);
  }
  const std::string model_name = std::filesystem::path(f.model_path).filename().string();
  const Output output = OutputOf(f);
  if (output == Output::kMarkdown) {
    const std::string how_many =
        f.fill ? std::string("As many requests as fit") : fmt::format("{} requests", f.concurrency);
    std::printf("%s of %d prompt + %d generated tokens, KV memory %s, %d threads\n\n",
                how_many.c_str(), prompt, gen, FormatBytes(static_cast<double>(*kv_mem)).c_str(),
                o.n_threads);
    std::printf(
        "| model | kv | KV per sequence | admitted | decode t/s | end-to-end t/s | TTFT p50 / p99 "
        "ms | ITL p50 / p99 ms | peak RSS |\n");
    std::printf("|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    std::fflush(stdout);
  }
  RecordPrinter printer(
      output, {{"model", f.model_path},
               {"mode", "throughput"},
               {"concurrency", f.fill ? nlohmann::json("fill") : nlohmann::json(f.concurrency)},
               {"prompt", prompt},
               {"generate", gen},
               {"kv_memory_bytes", *kv_mem},
               {"threads", o.n_threads},
               {"chunk", o.chunk},
               {"batch_tokens", o.batch_tokens},
               {"kv_type_k", std::string(TraitsOf(o.kv_types.k).name)},
               {"kv_type_v", std::string(TraitsOf(o.kv_types.v).name)},
               {"warmup", bench.warmup},
               {"seed", o.seed}});
  for (size_t i = 0; i < specs.size(); ++i) {
    const KvSpec& spec = specs[i];
    if (!why_skipped[i].empty()) {
      if (output == Output::kMarkdown) {
        std::printf("| %s | %s | skipped | - | - | - | - | - | - |\n", model_name.c_str(),
                    spec.text.c_str());
      } else {
        printer.Add(SkippedRecord({{"kv", spec.text}}, why_skipped[i]));
      }
      continue;
    }
    o.concurrency = requests[i];
    auto r = RunThroughput(model, spec, o);
    if (!r.ok()) return Fail(r.status());
    if (output != Output::kMarkdown) {
      printer.Add({{"kv", r->kv},
                   {"skipped", false},
                   {"requests", o.concurrency},
                   {"kv_resolved", r->kv_resolved},
                   {"kv_bytes_per_sequence", r->kv_bytes_per_sequence},
                   {"admitted", r->admitted},
                   {"seconds", r->seconds},
                   {"generated", r->generated},
                   {"decode_tps", r->decode_tps},
                   {"end_to_end_tps", r->end_to_end_tps},
                   {"ttft_p50_ms", r->ttft_p50_ms},
                   {"ttft_p99_ms", r->ttft_p99_ms},
                   {"itl_p50_ms", r->itl_p50_ms},
                   {"itl_p99_ms", r->itl_p99_ms},
                   {"peak_rss_bytes", r->peak_rss_bytes}});
      continue;
    }
    const std::string kv =
        r->kv_resolved == r->kv ? r->kv : fmt::format("{} (= {})", r->kv, r->kv_resolved);
    std::printf("| %s | %s | %s | %d | %.2f | %.2f | %.1f / %.1f | %.1f / %.1f | %s |\n",
                model_name.c_str(), kv.c_str(),
                FormatBytes(static_cast<double>(r->kv_bytes_per_sequence)).c_str(), r->admitted,
                r->decode_tps, r->end_to_end_tps, r->ttft_p50_ms, r->ttft_p99_ms, r->itl_p50_ms,
                r->itl_p99_ms, FormatBytes(static_cast<double>(r->peak_rss_bytes)).c_str());
    std::fflush(stdout);
  }
  printer.Finish();
  return 0;
}

// A depth past the trained context measures speed on positions the model
// never saw; the figures still count, the quality would not.
void WarnWhenBeyondTraining(const Model& model, const std::vector<BenchTest>& tests) {
  const int32_t trained = model.hparams().n_ctx_train;
  int64_t longest = 0;
  for (const BenchTest& t : tests) longest = std::max(longest, t.total());
  if (trained > 0 && longest > trained) {
    Warn("--depth + test tokens reach {}, beyond the {} tokens the model was trained on", longest,
         trained);
  }
}

int RunBench(const BenchFlags& f) {
  // Everything the command line can get wrong is checked before the model
  // loads and before any output.
  auto prompts = ParseCounts(f.prompt, "-p");
  if (!prompts.ok()) return Fail(prompts.status());
  auto gens = ParseCounts(f.gen, "-n");
  if (!gens.ok()) return Fail(gens.status());
  auto depths = ParseCounts(f.depth, "--depth");
  if (!depths.ok()) return Fail(depths.status());
  std::vector<KvSpec> specs;
  for (const std::string& text : f.kv) {
    auto split = SplitKvSpecList(text);
    if (!split.ok()) return Fail(split.status().WithContext("--kv"));
    for (const std::string& s : *split) {
      auto spec = ParseKvSpec(s);
      if (!spec.ok()) return Fail(spec.status().WithContext(fmt::format("--kv '{}'", s)));
      specs.push_back(std::move(spec).value());
    }
  }
  std::vector<BenchTest> tests;  // per depth: pp tests, then tg tests (llama-bench's order)
  for (int32_t d : *depths) {
    for (int32_t p : *prompts) {
      if (p > 0) tests.push_back({BenchKind::kPrompt, p, d});
    }
    for (int32_t n : *gens) {
      if (n > 0) tests.push_back({BenchKind::kGenerate, n, d});
    }
  }
  if (f.concurrency < 0) {
    return Fail(fmt::format("--concurrency must be 1 or more, not {}", f.concurrency));
  }
  if (f.conversations < 0) {
    return Fail(fmt::format("--conversations must be 1 or more, not {}", f.conversations));
  }
  const bool throughput = f.concurrency > 0 || f.fill;
  const bool conversations = f.conversations > 0;
  const char* mode = conversations ? "--conversations" : "--concurrency";
  if (throughput && conversations) return Fail("--conversations and --concurrency are two modes");
  if ((throughput || conversations) &&
      (prompts->size() != 1 || gens->size() != 1 || prompts->front() < 1 || gens->front() < 1)) {
    return Fail(fmt::format("{} takes one -p and one -n, each at least 1", mode));
  }
  if ((throughput || conversations) && (depths->size() != 1 || depths->front() != 0)) {
    return Fail(fmt::format("{} runs from an empty cache: no --depth", mode));
  }
  if (tests.empty()) return Fail("nothing to run: every -p and -n is 0");
  WarnAboutThreads(f.n_threads);
  for (const BenchTest& t : tests) {
    if (t.total() > INT32_MAX) {
      return Fail(fmt::format("--depth {} + {} tokens is too long", t.depth, t.n_tokens));
    }
  }
  BenchOptions options;
  options.n_threads = f.n_threads > 0
                          ? f.n_threads
                          : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  options.chunk = f.chunk;
  options.repetitions = f.repetitions;
  options.seed = f.seed;
  options.warmup = f.warmup;
  options.kv_types = KvElementTypes(f.kv_type, f.kv_type_k, f.kv_type_v).value();  // IsMember's
  if (throughput) {
    return RunThroughputMode(f, specs, prompts->front(), gens->front(), options);
  }
  if (conversations) {
    return RunConversationMode({.model_path = f.model_path,
                                .no_repack = f.no_repack,
                                .specs = specs,
                                .users = f.conversations,
                                .turns = f.turns,
                                .turn_tokens = prompts->front(),
                                .generate = gens->front(),
                                .cache_ram = f.cache_ram,
                                .prompt_cache = f.prompt_cache,
                                .bench = options,
                                .output = OutputOf(f)});
  }

  auto model_result =
      Model::Load(f.model_path, {.repack = !f.no_repack, .n_threads = options.n_threads});
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  if (Status s = CheckKvTypes(options.kv_types, model.hparams().head_dim); !s.ok()) return Fail(s);
  WarnWhenBeyondTraining(model, tests);
  // A cell (spec x test) that cannot run, e.g. a percent budget that is 0
  // tokens at depth 0, is skipped rather than ending a sweep whose other
  // cells are fine.
  std::vector<std::string> why_skipped;  // per cell, in run order
  for (const KvSpec& spec : specs) {
    for (const BenchTest& test : tests) {
      why_skipped.push_back(CheckBenchTest(model, spec, test, options).message());
    }
  }
  if (auto failed = NoteSkippedCells(why_skipped)) return *failed;
  const ModelFootprint footprint = DescribeModel(model);
  const bool progress = isatty(STDERR_FILENO) == 1;

  double membw_gbps = 0;
  if (f.membw_mib > 0) {
    if (progress) std::fprintf(stderr, "bench: measuring memory bandwidth\n");
    membw_gbps = MeasureMemoryBandwidthGbps(
        {options.n_threads, static_cast<size_t>(f.membw_mib) << 20, /*passes=*/5});
  }
  // Asked once here only to say in the header what the column measures;
  // each test resets the peak again.
  const bool rss_per_test = ResetPeakRss();

  const std::string model_name = std::filesystem::path(f.model_path).filename().string();
  const std::string type_size =
      fmt::format("{} {} {}, {}", footprint.arch, FormatCount(footprint.n_params),
                  footprint.weight_type, FormatBytes(static_cast<double>(footprint.tensor_bytes)));
  const Output output = OutputOf(f);
  const kernels::KernelTable& kernel_table = kernels::ActiveKernels();
  const std::optional<TensorType> weight_type = ParseTensorType(footprint.weight_type);
  const std::string matrix_kernel =
      weight_type ? kernels::DescribeMatrixKernel(kernel_table, *weight_type) : "-";
  if (output == Output::kMarkdown) {
    std::printf("kernels: %s; %s weights: %s\n", kernel_table.name, footprint.weight_type.c_str(),
                matrix_kernel.c_str());
    std::printf(
        "memory bandwidth: %s (%d threads); weights read per token: %s; percent KV budgets "
        "resolve against depth + the test's tokens\n",
        membw_gbps > 0 ? fmt::format("{:.2f} GB/s", membw_gbps).c_str() : "not measured",
        options.n_threads,
        FormatBytes(static_cast<double>(footprint.weight_bytes_per_token)).c_str());
    std::printf("t/s: the median and the range of %d timed run%s per test%s; peak RSS: %s\n\n",
                options.repetitions, options.repetitions == 1 ? "" : "s",
                options.warmup ? ", after one untimed warm-up run" : "",
                rss_per_test ? "the process's peak resident memory during the test (the mapped "
                               "weights count once paged in)"
                             : "the process's peak resident memory so far, at the end of the test "
                               "(this kernel cannot reset the peak)");
    std::printf(
        "| model | type / size | threads | test | depth | kv | t/s (median) | t/s (min..max) | KV "
        "bytes | KV vs full | peak RSS | GB/s | roofline |\n");
    std::printf("|---|---|--:|---|--:|---|--:|--:|--:|--:|--:|--:|--:|\n");
    std::fflush(stdout);
  }

  RecordPrinter printer(
      output,
      {{"model", f.model_path},
       {"model_type", type_size},
       {"arch", footprint.arch},
       {"n_params", footprint.n_params},
       {"model_bytes", footprint.tensor_bytes},
       {"weight_bytes_per_token", footprint.weight_bytes_per_token},
       {"threads", options.n_threads},
       {"kernels", kernel_table.name},
       {"matrix_kernel", matrix_kernel},
       {"kv_type_k", std::string(TraitsOf(options.kv_types.k).name)},
       {"kv_type_v", std::string(TraitsOf(options.kv_types.v).name)},
       {"chunk", options.chunk},
       {"repetitions", options.repetitions},
       {"warmup", options.warmup},
       {"seed", options.seed},
       {"membw_gbps", membw_gbps > 0 ? nlohmann::json(membw_gbps) : nlohmann::json(nullptr)},
       {"percent_budgets_resolve_against", "depth + n_tokens"}});
  const size_t n_runs = why_skipped.size();
  size_t run = 0;
  for (const KvSpec& spec : specs) {
    for (const BenchTest& test : tests) {
      const std::string& why = why_skipped[run++];
      if (!why.empty()) {
        if (output == Output::kMarkdown) {
          std::printf("| %s | %s | %d | %s | %d | %s | skipped | - | - | - | - | - | - |\n",
                      model_name.c_str(), type_size.c_str(), options.n_threads,
                      test.Name().c_str(), test.depth, spec.text.c_str());
        } else {
          printer.Add(SkippedRecord(
              {{"test", test.Name()}, {"n_tokens", test.n_tokens}, {"depth", test.depth},
               {"kv", spec.text}},
              why));
        }
        continue;
      }
      if (progress) {
        std::fprintf(stderr, "bench: [%zu/%zu] %s depth %d, kv %s\n", run, n_runs,
                     test.Name().c_str(), test.depth, spec.text.c_str());
      }
      auto r = RunBenchTest(model, spec, test, options, membw_gbps);
      if (!r.ok()) return Fail(r.status());
      if (output != Output::kMarkdown) {
        printer.Add({{"test", test.Name()},
                     {"n_tokens", test.n_tokens},
                     {"depth", test.depth},
                     {"kv", r->kv},
                     {"skipped", false},
                     {"kv_resolved", r->kv_resolved},
                     {"tps", r->tps},
                     {"tps_min", r->tps_min},
                     {"tps_median", r->tps_median},
                     {"tps_max", r->tps_max},
                     {"kv_bytes", r->kv_bytes},
                     {"kv_row_bytes", r->kv_memory.rows},
                     {"kv_bookkeeping_bytes", r->kv_memory.bookkeeping},
                     {"kv_bytes_full", r->kv_bytes_full},
                     {"kv_full_row_bytes", r->kv_memory_full.rows},
                     {"kv_full_bookkeeping_bytes", r->kv_memory_full.bookkeeping},
                     {"kv_over_full", r->kv_over_full.empty()
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(r->kv_over_full)},
                     {"peak_rss_bytes", r->peak_rss_bytes},
                     {"peak_rss_per_test", r->peak_rss_per_test},
                     {"threads", r->threads},
                     {"kv_tokens_read", OrNull(r->kv_tokens_read)},
                     {"bytes_per_token", OrNull(r->bytes_per_token)},
                     {"achieved_gbps", OrNull(r->achieved_gbps)},
                     {"roofline_tps", OrNull(r->roofline_tps)}});
        continue;
      }
      const std::string kv =
          r->kv_resolved == r->kv ? r->kv : fmt::format("{} (= {})", r->kv, r->kv_resolved);
      // The figure generate and inspect print (kv/kv_report.h), and why a
      // cache needs more than full where it does.
      const std::string vs_full =
          fmt::format("{:.2f}x{}", KvRatio(r->kv_memory, r->kv_memory_full),
                      r->kv_over_full.empty() ? "" : " (" + r->kv_over_full + ")");
      std::printf("| %s | %s | %d | %s | %d | %s | %.2f | %.2f..%.2f | %s | %s | %s | %s | %s |\n",
                  model_name.c_str(), type_size.c_str(), r->threads, test.Name().c_str(),
                  test.depth, kv.c_str(), r->tps_median, r->tps_min, r->tps_max,
                  FormatKvMemory(r->kv_memory).c_str(), vs_full.c_str(),
                  FormatBytes(static_cast<double>(r->peak_rss_bytes)).c_str(),
                  r->achieved_gbps ? fmt::format("{:.2f}", *r->achieved_gbps).c_str() : "-",
                  r->roofline_tps
                      ? fmt::format("{:.1f}%", 100.0 * r->tps_median / *r->roofline_tps).c_str()
                      : "-");
      std::fflush(stdout);
    }
  }
  printer.Finish();
  return 0;
}

}  // namespace

Command RegisterBench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "prompt (pp) and generation (tg) speed at context depths, per KV policy");
  cmd->add_option("-m,--model", f->model_path, "GGUF model file")->required();
  // List flags are read as text (commas split by us, not CLI11) so a bad
  // item gets a clear error and --kv specs keep their own commas.
  cmd->add_option("-p,--n-prompt", f->prompt, "prompt lengths to time, e.g. 512,2048 (0: none)")
      ->capture_default_str();
  cmd->add_option("-n,--n-gen", f->gen, "generated-token counts to time, e.g. 128 (0: none)")
      ->capture_default_str();
  cmd->add_option("-d,--depth", f->depth,
                  "context tokens fed (untimed) before each test, e.g. 0,512,2048")
      ->capture_default_str();
  cmd->add_option("--kv", f->kv,
                  "KV specs, comma-separated or repeated, e.g. full,h2o:heavy=10%,recent=10%; "
                  "percentages are of depth + the test's tokens")
      ->capture_default_str();
  cmd->add_option("-r,--repetitions", f->repetitions,
                  "timed runs per test (their median and min..max); the depth is filled once "
                  "per test")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("!--no-warmup", f->warmup,
                "no untimed warm-up run of each test before its timed runs");
  cmd->add_option("-t,--threads", f->n_threads, "threads (default: all)")
      ->check(CLI::NonNegativeNumber);
  AddNoRepackFlag(*cmd, f->no_repack);
  cmd->add_option("-b,--batch-size,--chunk", f->chunk,
                  "tokens per forward pass for depth filling and pp (0: all at once)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddKvTypeOptions(*cmd, f->kv_type, f->kv_type_k, f->kv_type_v);
  cmd->add_option("--seed", f->seed, "seed of the random token stream")->capture_default_str();
  cmd->add_option("--membw-mib", f->membw_mib,
                  "buffer read to measure memory bandwidth, MiB (0: skip the roofline)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI::Option* output =
      cmd->add_option("-o,--output", f->output,
                      "md: a markdown table; json: one JSON object, the configuration and a "
                      "record per test; jsonl: a JSON line per test as it finishes")
          ->check(CLI::IsMember({"md", "json", "jsonl"}))
          ->capture_default_str();
  cmd->add_flag("--json", f->json, "the same as -o json")->excludes(output);
  cmd->add_option("--concurrency", f->concurrency,
                  "throughput mode: N requests of -p prompt + -n generated tokens at once, "
                  "continuously batched under --kv-mem, per --kv policy (admitted sequences, "
                  "decode and end-to-end tok/s, time to first token, inter-token latency)");
  cmd->add_option("--kv-mem", f->kv_mem,
                  "throughput mode: the KV memory all running sequences share, e.g. 2GiB")
      ->capture_default_str();
  cmd->add_flag("--fill", f->fill,
                "throughput mode: each --kv policy gets as many requests as its KV reservation "
                "fits in the KV memory (instead of --concurrency)");
  cmd->add_option("--kv-mem-full", f->kv_mem_full,
                  "throughput mode: the KV memory is what N full-cache requests of -p + -n tokens "
                  "reserve (instead of --kv-mem)");
  cmd->add_option("--batch-tokens", f->batch_tokens,
                  "throughput mode: tokens per forward pass, all sequences together (decode "
                  "tokens first, then prompt chunks of --chunk each; raised to --chunk)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--conversations", f->conversations,
                  "conversation mode: N users, each holding a --turns conversation that resends "
                  "its whole history every turn (a -p token message, a -n token answer), served "
                  "one request at a time with the prompt cache in --cache-ram, per --kv policy "
                  "(time to first token per turn, conversations kept)");
  cmd->add_option("--turns", f->turns, "conversation mode: turns per conversation")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--cache-ram", f->cache_ram,
                  "conversation mode: the prompt cache's memory, e.g. 256MiB")
      ->capture_default_str();
  cmd->add_option("--prompt-cache", f->prompt_cache,
                  "conversation mode: run with the prompt cache on, off, or both (off first)")
      ->check(CLI::IsMember({"on", "off", "both"}))
      ->capture_default_str();
  return {cmd, [f] { return RunBench(*f); }};
}

}  // namespace h2o::cli
