#include "cli_common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <limits>
#include <thread>

#include "cli_log.h"
#include "core/atomic_file.h"
#include "core/byte_size.h"
#include "core/strings.h"
#include "kernels/dispatch.h"
#include "kv/kv_report.h"
#include "model/check_tensors.h"
#include "report/kv_dump.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/utf8.h"

namespace h2o::cli {

void AddModelFlags(CLI::App& cmd, ModelFlags& flags, int32_t default_chunk, bool kv_type_list) {
  flags.chunk = default_chunk;
  cmd.add_option("-m,--model", flags.model_path, "GGUF model file")->required();
  cmd.add_option("-c,--ctx-size", flags.n_ctx, "context size (default: the model's)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("-t,--threads", flags.n_threads, "threads (default: all)")
      ->check(CLI::NonNegativeNumber);
  // --chunk: the name before llama.cpp's -b (it clashes with perplexity's --chunks).
  cmd.add_option("-b,--batch-size,--chunk", flags.chunk,
                 "tokens per forward pass (0: whole prompt)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddKvTypeOptions(cmd, flags.kv_type, flags.kv_type_k, flags.kv_type_v, kv_type_list);
  cmd.add_option("--kv", flags.kv_spec,
                 "KV cache policy and budget, e.g. h2o:heavy=64,recent=64, "
                 "h2o:heavy=10%,recent=10%, local:recent=128, sink:sinks=4,recent=124, "
                 "h2only:heavy=64, tova:k=128, random:k=64,recent=64,seed=1, "
                 "snapkv:budget=128,window=32; h2o also takes score=mean or "
                 "score=ema,decay=0.9, and h2o and snapkv take pyramid=20 (README: --kv)")
      ->capture_default_str();
  cmd.add_option("--kv-keep", flags.kv_keep,
                 "pin the first N tokens in every head whatever the policy evicts, on top of its "
                 "budget (-1: the whole prompt; chat: the system prompt); as keep=N in --kv")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text.starts_with('-') && text != "-1"
                       ? "must be a token count, or -1 for the whole prompt"
                       : "";
          },
          "N"))
      ->capture_default_str();
  cmd.add_flag("--kv-pos-shift", flags.kv_pos_shift,
               "sink/h2o: rotate cached keys by their rank in the cache, so the sequence can "
               "run past the model's context");
  cmd.add_option("--kv-dump", flags.kv_dump_path,
                 "write the kept positions and scores per layer and KV head as JSON at the end");
  cmd.add_flag("--check-tensors", flags.check_tensors,
               "scan every weight for NaN and Inf at load (a pass over the file)");
  AddNoRepackFlag(cmd, flags.no_repack);
}

void AddNoRepackFlag(CLI::App& cmd, bool& no_repack) {
  cmd.add_flag("--no-repack", no_repack,
               "use the file's weight rows as they are, not a copy made at load (repacked for the "
               "matrix kernels where they have a layout, in huge pages): less private memory, "
               "pages shared between processes; slower");
}

void AddSamplingFlags(CLI::App& cmd, SamplingFlags& sampling) {
  SamplerOptions& o = sampling.options;
  cmd.add_option("--temp", o.temperature, "temperature (0: greedy)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--top-k", o.top_k, "top-k (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--top-p", o.top_p, "top-p (1: off)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd.add_option("--min-p", o.min_p,
                 "drop tokens less likely than this times the most likely one (0: off)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd.add_option("--repeat-penalty", o.repeat_penalty,
                 "divide the logits of the last --repeat-last-n tokens by this (1: off)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--repeat-last-n", o.repeat_last_n, "tokens the repeat penalty looks back at")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--frequency-penalty", o.frequency_penalty,
                 "subtract this from a token's logit per time it occurs in the last "
                 "--repeat-last-n tokens (0: off)")
      ->check(CLI::Range(-2.0f, 2.0f))
      ->capture_default_str();
  cmd.add_option("--presence-penalty", o.presence_penalty,
                 "subtract this from the logit of every token in the last --repeat-last-n "
                 "(0: off)")
      ->check(CLI::Range(-2.0f, 2.0f))
      ->capture_default_str();
  cmd.add_option("--typical", o.typical_p, "locally typical sampling, p (1: off)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd.add_option("-l,--logit-bias", sampling.logit_bias,
                 "TOKEN_ID+BIAS or TOKEN_ID-BIAS added to that token's logit (-inf: never), "
                 "as llama.cpp's; repeatable");
  cmd.add_option("-s,--seed", sampling.seed,
                 "random seed (default: a random one, printed so the run can be repeated)")
      ->check(CLI::NonNegativeNumber);
  auto* grammar = cmd.add_option("--grammar", sampling.grammar,
                                 "GBNF grammar the output must match (llama.cpp's format)");
  auto* grammar_file =
      cmd.add_option("--grammar-file", sampling.grammar_file, "file with a GBNF grammar");
  auto* schema = cmd.add_option("-j,--json-schema", sampling.json_schema,
                                "JSON schema the output must be valid against ('{}': any JSON)");
  auto* schema_file = cmd.add_option("--json-schema-file", sampling.json_schema_file,
                                     "file with a JSON schema (-jf)");
  for (CLI::Option* a : {grammar, grammar_file, schema, schema_file}) {
    for (CLI::Option* b : {grammar, grammar_file, schema, schema_file}) {
      if (a != b) a->excludes(b);
    }
  }
}

Result<SamplerOptions> ResolveSampling(const SamplingFlags& sampling, int32_t n_vocab) {
  SamplerOptions o = sampling.options;
  o.seed = sampling.seed.has_value() ? *sampling.seed : std::random_device{}();
  for (const std::string& text : sampling.logit_bias) {
    // llama.cpp's form: the id, then the signed bias ("15043+1", "2-inf").
    const size_t sign = text.find_first_of("+-", 1);
    int32_t id = -1;
    float bias = 0.0f;
    bool ok = sign != std::string::npos;
    if (ok) {
      const auto [end, ec] = std::from_chars(text.data(), text.data() + sign, id);
      ok = ec == std::errc() && end == text.data() + sign;
    }
    if (ok) {
      const std::string value = text.substr(sign);
      if (value == "-inf") {
        bias = -std::numeric_limits<float>::infinity();
      } else {
        const auto [end, ec] = std::from_chars(value.data() + (value[0] == '+' ? 1 : 0),
                                               value.data() + value.size(), bias);
        ok = ec == std::errc() && end == value.data() + value.size() && std::isfinite(bias);
      }
    }
    if (!ok) {
      return Status::Error(fmt::format(
          "--logit-bias: '{}' is not TOKEN_ID+BIAS or TOKEN_ID-BIAS (e.g. 15043+1, 2-inf)", text));
    }
    if (id < 0 || id >= n_vocab) {
      return Status::Error(fmt::format("--logit-bias: token {} is not below the vocabulary size {}",
                                       id, n_vocab));
    }
    o.logit_bias.emplace_back(id, bias);
  }
  return o;
}

void NoteSeed(const SamplingFlags& sampling, const SamplerOptions& resolved) {
  // Greedy decoding draws nothing: its seed would only mislead.
  if (!sampling.seed.has_value() && resolved.temperature > 0.0f) {
    Note("seed: {} (repeat with -s {})", resolved.seed, resolved.seed);
  }
}

void RequireEither(CLI::App& cmd, const std::string& option_a, const std::string& option_b,
                   const std::string& what) {
  CLI::App* app = &cmd;
  cmd.callback([app, option_a, option_b, what] {
    if (app->count(option_a) + app->count(option_b) == 0) throw CLI::RequiredError(what);
  });
}

Result<std::unique_ptr<Model>> LoadModel(const ModelFlags& flags) {
  H2O_ASSIGN_OR_RETURN(
      std::unique_ptr<Model> model,
      Model::Load(flags.model_path, {.repack = !flags.no_repack, .n_threads = ThreadCount(flags)}));
  // A KV type this model's heads cannot hold stops every command here, the
  // server before it listens rather than at each request.
  H2O_ASSIGN_OR_RETURN(const std::vector<KvTypes> kv_types, KvTypeList(flags));
  for (const KvTypes& types : kv_types) {
    H2O_RETURN_IF_ERROR(CheckKvTypes(types, model->hparams().head_dim));
  }
  if (flags.check_tensors) H2O_RETURN_IF_ERROR(CheckTensorValues(model->file()));
  const int32_t trained = model->hparams().n_ctx_train;
  // Models with learned positions refuse such a context (Sequence says so).
  if (trained > 0 && flags.n_ctx > trained && model->hparams().spec->rotary()) {
    Warn(
        "-c {} is beyond the {} tokens the model was trained on: quality past them is not what "
        "the model was made for",
        flags.n_ctx, trained);
  }
  WarnAboutThreads(flags.n_threads);
  return model;
}

void WarnAboutThreads(int32_t n_threads) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && n_threads > static_cast<int32_t>(cores)) {
    Warn(
        "-t {} is more threads than the {} this machine runs at once: they will take turns, "
        "which is slower",
        n_threads, cores);
  }
}

Status CheckWritable(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return Status::Error(fmt::format("{} {}: is a directory, not a file", flag, path));
  }
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(dir, ec)) {
    return Status::Error(fmt::format("{} {}: directory {} does not exist", flag, path, dir));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return Status::Error(fmt::format("{} {}: directory {} is not writable", flag, path, dir));
  }
  return Status::Ok();
}

int32_t ThreadCount(const ModelFlags& flags) {
  return flags.n_threads > 0
             ? flags.n_threads
             : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

int64_t ContextSize(const ModelFlags& flags, const Model& model) {
  return flags.n_ctx > 0 ? flags.n_ctx : model.hparams().n_ctx_train;
}

Result<SessionOptions> MakeSessionOptions(const ModelFlags& flags, KvLengths lengths) {
  SessionOptions o;
  auto spec = ParseKvSpec(flags.kv_spec);
  if (!spec.ok()) return spec.status().WithContext("--kv");
  const std::optional<int64_t> sequence = lengths.sequence;
  const std::optional<int64_t> prompt_len = lengths.prompt ? lengths.prompt : sequence;
  if (flags.kv_keep != 0) {
    if (spec->params.contains("keep")) {
      return Status::Error("--kv-keep: the --kv spec already says keep=; give one of them");
    }
    const int64_t keep = flags.kv_keep == -1 ? lengths.keep_all.value_or(prompt_len.value_or(0))
                                             : flags.kv_keep;
    if (prompt_len && keep > *prompt_len) {
      return Status::Error(fmt::format("--kv-keep: {} tokens is more than the prompt's {}", keep,
                                       *prompt_len));
    }
    SetKvKeep(*spec, keep);
  }
  auto plan = ResolveKvSpec(*spec, sequence);
  if (!plan.ok()) return plan.status().WithContext("--kv");
  for (const std::string& warning : KvSpecWarnings(*spec, sequence)) Warn("--kv: {}", warning);
  if (!flags.kv_dump_path.empty()) {
    H2O_RETURN_IF_ERROR(CheckWritable(flags.kv_dump_path, "--kv-dump"));
  }
  o.kv = std::move(plan).value();
  o.kv_pos_shift = flags.kv_pos_shift;
  o.n_ctx = flags.n_ctx;
  o.n_threads = ThreadCount(flags);
  o.max_chunk = flags.chunk;
  H2O_ASSIGN_OR_RETURN(o.kv_types, KvElementTypes(flags));
  return o;
}

void AddKvTypeOptions(CLI::App& cmd, std::string& both, std::string& k, std::string& v,
                      bool both_is_list) {
  std::vector<std::string> names;
  for (TensorType t : kernels::KvRowTypes()) names.emplace_back(TraitsOf(t).name);
  const CLI::Validator kv_types = CLI::IsMember(names);
  const std::string list = fmt::format("{}", fmt::join(names, ", "));
  if (both_is_list) {
    const CLI::Validator each_type(
        [](std::string& text) -> std::string {
          for (std::string_view name : SplitCommas(text)) {
            if (auto t = ParseKvRowType(name); !t.ok()) return t.status().message();
          }
          return "";
        },
        "TYPE[,TYPE...]");
    cmd.add_option("--kv-type", both,
                   "KV cache element type(s) of K and V, comma-separated: one run per type "
                   "(KL against the full cache of the first); from " +
                       list)
        ->check(each_type)
        ->capture_default_str();
  } else {
    cmd.add_option("--kv-type", both, "KV cache element type of K and V: " + list)
        ->check(kv_types)
        ->capture_default_str();
  }
  // llama.cpp's -ctk/-ctv are rewritten to --cache-type-k/v before parsing
  // (llama_aliases.h).
  cmd.add_option("--kv-type-k,--cache-type-k", k, "K element type (-ctk; default --kv-type)")
      ->check(kv_types);
  cmd.add_option("--kv-type-v,--cache-type-v", v, "V element type (-ctv; default --kv-type)")
      ->check(kv_types);
}

Result<KvTypes> KvElementTypes(const std::string& both, const std::string& k,
                               const std::string& v) {
  KvTypes types;
  H2O_ASSIGN_OR_RETURN(types.k, ParseKvRowType(k.empty() ? both : k));
  H2O_ASSIGN_OR_RETURN(types.v, ParseKvRowType(v.empty() ? both : v));
  return types;
}

Result<KvTypes> KvElementTypes(const ModelFlags& flags) {
  return KvElementTypes(flags.kv_type, flags.kv_type_k, flags.kv_type_v);
}

KvRunNames NameKvRun(const std::string& policy, const std::string& spec, const KvTypes& types,
                     bool types_swept) {
  if (!types_swept) return {policy, spec};
  return {fmt::format("{} {}", policy, types.Name()), fmt::format("{} ({})", spec, types.Name())};
}

Result<std::vector<KvTypes>> KvTypeList(const ModelFlags& flags) {
  std::vector<KvTypes> list;
  for (std::string_view name : SplitCommas(flags.kv_type)) {
    H2O_ASSIGN_OR_RETURN(KvTypes types,
                         KvElementTypes(std::string(name), flags.kv_type_k, flags.kv_type_v));
    if (std::find(list.begin(), list.end(), types) == list.end()) list.push_back(types);
  }
  if (list.empty()) return Status::Error("--kv-type: no type given");
  return list;
}

std::string KvTypeName(const ModelFlags& flags) {
  const Result<KvTypes> types = KvElementTypes(flags);
  return types.ok() ? types->Name() : flags.kv_type;
}

Result<Tokenizer> LoadTokenizer(const gguf::File& file) { return LoadTokenizerFromGguf(file); }

Result<Tokenizer> LoadTokenizer(const Model& model) { return LoadTokenizer(model.file()); }

Status WriteKvDump(const KvCache& cache, const std::string& path) {
  H2O_RETURN_IF_ERROR(WriteFileAtomically(path, KvDumpJson(cache)));
  Note("wrote {}", path);
  return Status::Ok();
}

std::string DescribeKvMemory(const Sequence& sequence, int64_t n_tokens) {
  const KvCache& cache = sequence.cache();
  return fmt::format("KV cache ({}, {}): {}", sequence.kv_plan().Describe(),
                     cache.config().types.Name(),
                     DescribeKvVsFull(cache.config(), cache.policy(), n_tokens));
}

int Fail(const Status& status) { return Fail(status.message()); }

int Fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "h2o: error: %s\n", message.c_str());
  return 1;
}

CLI::Validator MinusOneOrMore() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        // Not a whole number: the conversion's error says so.
        if (ec != std::errc() || end != text.data() + text.size() || v >= -1) return "";
        return "Value " + text + " not in range -1 to inf";
      },
      "-1 or more");
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) text.append(buffer, n);
    if (std::ferror(stdin)) return Status::Error("-: cannot read standard input");
    H2O_RETURN_IF_ERROR(CheckUtf8(text, "standard input"));
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(fmt::format("{}: cannot open file", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Error(fmt::format("{}: read error", path));
  text = std::move(ss).str();
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
