// What the `h2o` subcommands share: model/session flags, loading, input
// files and the one-line error convention.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/file.h"
#include "grammar/grammar.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace h2o::cli {

// Flags every model-running command takes.
struct ModelFlags {
  std::string model_path;
  int32_t n_ctx = 0;
  int32_t n_threads = 0;  // 0: all hardware threads
  int32_t chunk = 0;
  std::string kv_type = "f16";
  std::string kv_type_k, kv_type_v;  // -ctk/-ctv; empty: kv_type
  std::string kv_spec = "full";
  int64_t kv_keep = 0;  // --kv-keep; -1: the whole prompt (chat: the system prompt)
  bool kv_pos_shift = false;
  std::string kv_dump_path;
  bool check_tensors = false;
  bool no_repack = false;
};

// Adds -m/--model (required), -c/--ctx-size, -t/--threads, -b/--batch-size
// (alias --chunk), --kv-type, --cache-type-k/v, --kv, --kv-keep, --kv-pos-shift,
// --kv-dump, --check-tensors, --no-repack. kv_type_list: --kv-type takes a
// comma-separated list (a sweep: KvTypeList), not one type.
void AddModelFlags(CLI::App& cmd, ModelFlags& flags, int32_t default_chunk,
                   bool kv_type_list = false);

// --no-repack (ModelLoadOptions::repack off), for commands with their own
// model flags (bench).
void AddNoRepackFlag(CLI::App& cmd, bool& no_repack);

struct SamplingFlags {
  SamplerOptions options;
  std::optional<uint64_t> seed;  // nullopt: a random seed, printed
  std::vector<std::string> logit_bias;  // -l: "ID+BIAS", "ID-BIAS", "ID-inf"
  // llama.cpp's: at most one of them constrains the output.
  std::string grammar, grammar_file, json_schema, json_schema_file;
};

// Adds --temp, --top-k, --top-p, --min-p, --typical, --repeat-penalty,
// --repeat-last-n, --frequency-penalty, --presence-penalty, -l/--logit-bias,
// -s/--seed, and --grammar, --grammar-file, -j/--json-schema and
// --json-schema-file (-jf).
void AddSamplingFlags(CLI::App& cmd, SamplingFlags& sampling);
// The grammar those flags ask for (GBNF, or a JSON schema's); null when
// none does. Errors: an unreadable file, a schema that is not JSON or not
// supported, a grammar that does not parse (one line each, naming the flag).
Result<std::shared_ptr<const Grammar>> ResolveGrammar(const SamplingFlags& sampling);
// -n's check where -1 means "no limit" (llama.cpp's habit): a whole number,
// -1 or more; help and errors say "-1 or more".
CLI::Validator MinusOneOrMore();
// The options to sample with; without -s, a random seed. Errors: a
// --logit-bias that is not ID+BIAS or names no token below n_vocab.
Result<SamplerOptions> ResolveSampling(const SamplingFlags& sampling, int32_t n_vocab);
// A random seed as a note, "seed: N (repeat with -s N)", as llama.cpp prints
// it; nothing when -s gave it or the sampling is greedy.
void NoteSeed(const SamplingFlags& sampling, const SamplerOptions& resolved);

// Makes parsing fail unless at least one of two options was given, e.g.
// RequireEither(cmd, "--file", "--token-file", "an input (-f TEXT or
// --token-file IDS)"). Sets the command's parse callback.
void RequireEither(CLI::App& cmd, const std::string& option_a, const std::string& option_b,
                   const std::string& what);

// Loads -m; warns when -c is beyond the trained context or -t above the
// hardware threads.
Result<std::unique_ptr<Model>> LoadModel(const ModelFlags& flags);
// Warns when n_threads is more than the hardware runs at once.
void WarnAboutThreads(int32_t n_threads);
// An error unless a file can be written at `path` (its directory exists and
// is writable, the path is not a directory): output paths are checked
// before a run, not after it. `flag` names the option in the message.
Status CheckWritable(const std::string& path, const std::string& flag);
// --kv-type (both), --kv-type-k/-ctk and --kv-type-v/-ctv (each overrides
// --kv-type for its rows), checked against the KV row types at parse time.
void AddKvTypeOptions(CLI::App& cmd, std::string& both, std::string& k, std::string& v,
                      bool both_is_list = false);
// The types of a --kv-type list ("f16,q8_0"), each for K and V, except
// that -ctk/-ctv, when given, set K/V of every entry; duplicates dropped.
Result<std::vector<KvTypes>> KvTypeList(const ModelFlags& flags);
// The K and V element types they give.
Result<KvTypes> KvElementTypes(const std::string& both, const std::string& k, const std::string& v);
Result<KvTypes> KvElementTypes(const ModelFlags& flags);
// How a report names a run of a --kv-type sweep: its policy and its spec,
// each followed by the KV type when several types run ("h2o q8_0" and
// "h2o:heavy=8,recent=8 (q8_0)"), else as they are.
struct KvRunNames {
  std::string label, kv;
};
KvRunNames NameKvRun(const std::string& policy, const std::string& spec, const KvTypes& types,
                     bool types_swept);
// KvTypes::Name() of the flags ("q8_0", "K q8_0, V f16"), for reports.
std::string KvTypeName(const ModelFlags& flags);
// -t, or every hardware thread.
int32_t ThreadCount(const ModelFlags& flags);
// -c, else the context the model was trained at.
int64_t ContextSize(const ModelFlags& flags, const Model& model);
// What a command's --kv and --kv-keep refer to.
struct KvLengths {
  // The tokens the cache will hold, which percent budgets are of: prompt +
  // tokens to generate, or the context where a conversation's length is
  // not known. nullopt: unknown (a percentage is then an error).
  std::optional<int64_t> sequence;
  // The prompt, which --kv-keep may not exceed (default: sequence).
  std::optional<int64_t> prompt = std::nullopt;
  // What --kv-keep -1 pins (default: prompt).
  std::optional<int64_t> keep_all = std::nullopt;
};
// Checks --kv, the KV types and that --kv-dump can be written; warns about
// what KvSpecWarnings finds; resolves --kv and --kv-keep against `lengths`.
Result<SessionOptions> MakeSessionOptions(const ModelFlags& flags, KvLengths lengths);
// Writes, per layer and KV head, the kept positions and their scores as
// JSON (atomically: no partial file on failure), then notes "wrote PATH".
Status WriteKvDump(const KvCache& cache, const std::string& path);
// "KV cache (h2o:heavy=8,recent=8, f16): " + DescribeKvVsFull (kv/kv_report.h),
// the figure inspect, bench and perplexity print too.
std::string DescribeKvMemory(const Sequence& sequence, int64_t n_tokens);
// The tokenizer of a GGUF file: a model's, or a vocab-only file's.
Result<Tokenizer> LoadTokenizer(const gguf::File& file);
Result<Tokenizer> LoadTokenizer(const Model& model);

// Prints "h2o: error: <message>" to stderr and returns the exit code 1.
int Fail(const Status& status);
int Fail(const std::string& message);

// The file's bytes ("-": standard input's, as llama.cpp's -f reads); an
// error unless they are well-formed UTF-8 (CheckUtf8).
Result<std::string> ReadTextFile(const std::string& path);
// Parses whitespace-separated token ids ("1 403 407"). `where` names the
// source in errors.
Result<std::vector<int32_t>> ParseTokenIds(const std::string& text, const std::string& where);
// Splits text into documents at "<|endoftext|>" markers, each stripped of
// surrounding whitespace; empty documents are dropped.
std::vector<std::string> SplitDocuments(const std::string& text);

std::string FormatBytes(double bytes);  // "1.50 MiB"

}  // namespace h2o::cli
