#include "cli_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/atomic_file.h"
#include "core/byte_size.h"
#include "core/strings.h"
#include "kv/kv_dump.h"
#include "kv/kv_report.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/utf8.h"

namespace h2o::cli {

void AddModelFlags(CLI::App& cmd, ModelFlags& flags, int32_t default_chunk) {
  flags.chunk = default_chunk;
  cmd.add_option("-m,--model", flags.model_path, "GGUF model file")->required();
  cmd.add_option("-c,--ctx-size", flags.n_ctx, "context size (default: the model's)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("-t,--threads", flags.n_threads, "threads (default: all)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--chunk", flags.chunk, "tokens per forward pass (0: whole prompt)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--kv-type", flags.kv_type, "KV cache element type: f16 or f32")
      ->capture_default_str();
  cmd.add_option("--kv", flags.kv_spec,
                 "KV cache policy and budget, e.g. h2o:heavy=64,recent=64, "
                 "h2o:heavy=10%,recent=10%, local:recent=128, sink:sinks=4,recent=124, "
                 "h2only:heavy=64, tova:k=128, random:k=64,recent=64,seed=1")
      ->capture_default_str();
  cmd.add_flag("--kv-pos-shift", flags.kv_pos_shift,
               "sink/h2o: rotate cached keys by their rank in the cache, so the sequence can "
               "run past the model's context");
  cmd.add_option("--kv-dump", flags.kv_dump_path,
                 "write the kept positions and scores per layer and KV head as JSON at the end");
}

void AddSamplingFlags(CLI::App& cmd, SamplerOptions& sampling) {
  cmd.add_option("--temp", sampling.temperature, "temperature (0: greedy)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--top-k", sampling.top_k, "top-k (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--top-p", sampling.top_p, "top-p (1: off)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd.add_option("--seed", sampling.seed, "random seed")->capture_default_str();
}

void RequireEither(CLI::App& cmd, const std::string& option_a, const std::string& option_b,
                   const std::string& what) {
  CLI::App* app = &cmd;
  cmd.callback([app, option_a, option_b, what] {
    if (app->count(option_a) + app->count(option_b) == 0) throw CLI::RequiredError(what);
  });
}

Result<std::unique_ptr<Model>> LoadModel(const ModelFlags& flags) {
  return Model::Load(flags.model_path);
}

int32_t ThreadCount(const ModelFlags& flags) {
  return flags.n_threads > 0
             ? flags.n_threads
             : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

Result<SessionOptions> MakeSessionOptions(const ModelFlags& flags,
                                          std::optional<int64_t> prompt_len) {
  SessionOptions o;
  auto spec = ParseKvSpec(flags.kv_spec);
  if (!spec.ok()) return spec.status().WithContext("--kv");
  auto plan = ResolveKvSpec(*spec, prompt_len);
  if (!plan.ok()) return plan.status().WithContext("--kv");
  o.kv = std::move(plan).value();
  o.kv_pos_shift = flags.kv_pos_shift;
  o.n_ctx = flags.n_ctx;
  o.n_threads = ThreadCount(flags);
  o.max_chunk = flags.chunk;
  if (flags.kv_type == "f16") {
    o.kv_type = TensorType::kF16;
  } else if (flags.kv_type == "f32") {
    o.kv_type = TensorType::kF32;
  } else {
    return Status::Error(fmt::format("--kv-type must be f16 or f32, not '{}'", flags.kv_type));
  }
  return o;
}

Result<Tokenizer> LoadTokenizer(const gguf::File& file) { return LoadTokenizerFromGguf(file); }

Result<Tokenizer> LoadTokenizer(const Model& model) { return LoadTokenizer(model.file()); }

Status WriteKvDump(const KvCache& cache, const std::string& path) {
  return WriteFileAtomically(path, KvDumpJson(cache));
}

std::string DescribeKvMemory(const Sequence& sequence, int64_t n_tokens) {
  const KvCache& cache = sequence.cache();
  return fmt::format("KV cache ({}, {}): {}", sequence.kv_plan().Describe(),
                     TraitsOf(cache.config().type).name,
                     DescribeKvVsFull(cache.config(), cache.policy(), n_tokens));
}

int Fail(const Status& status) { return Fail(status.message()); }

int Fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "h2o: error: %s\n", message.c_str());
  return 1;
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(fmt::format("{}: cannot open file", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Error(fmt::format("{}: read error", path));
  std::string text = std::move(ss).str();
  H2O_RETURN_IF_ERROR(CheckUtf8(text, path));
  return text;
}

Result<std::vector<int32_t>> ParseTokenIds(const std::string& text, const std::string& where) {
  std::vector<int32_t> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (true) {
    while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (p == end) break;
    const char* start = p;
    while (p < end && !std::isspace(static_cast<unsigned char>(*p))) ++p;
    int32_t id = 0;
    auto [ptr, ec] = std::from_chars(start, p, id);
    if (ec != std::errc() || ptr != p) {
      return Status::Error(
          fmt::format("{}: '{}' is not a token id", where, std::string(start, p - start)));
    }
    ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> SplitDocuments(const std::string& text) {
  static constexpr std::string_view kSeparator = "<|endoftext|>";
  std::vector<std::string> docs;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(kSeparator, begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view doc =
        Trim(std::string_view(text.data() + begin, end - begin), " \t\r\n");
    if (!doc.empty()) docs.emplace_back(doc);
    begin = end + kSeparator.size();
  }
  return docs;
}

std::string FormatBytes(double bytes) { return h2o::FormatBytes(bytes); }

}  // namespace h2o::cli
