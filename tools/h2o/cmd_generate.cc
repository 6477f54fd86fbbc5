// h2o generate: continue a prompt, streaming text to stdout.
#include <chrono>
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "cli_common.h"
#include "cli_errors.h"
#include "cli_log.h"
#include "commands.h"
#include "runtime/generate.h"
#include "tokenizer/utf8.h"

namespace h2o::cli {
namespace {

struct GenerateFlags {
  ModelFlags model;
  std::string prompt;
  std::string prompt_file;
  std::string token_ids;
  int32_t n_predict = 128;
  SamplingFlags sampling;
  std::vector<std::string> reverse_prompts;
  bool print_ids = false;
  bool ignore_eos = false;
  bool no_display_prompt = false;
};

// -n as llama.cpp reads it: -1 generates until the context is full (with
// --kv-pos-shift, until an end-of-generation token), and a count past the
// context stops at it, with a warning. A prompt that fills the context
// leaves nothing to generate: an error, unless positions shift.
Result<int64_t> TokensToGenerate(const GenerateFlags& f, const Model& model, int64_t prompt) {
  constexpr int64_t kUnbounded = std::numeric_limits<int32_t>::max();
  if (f.model.kv_pos_shift) return f.n_predict < 0 ? kUnbounded : f.n_predict;
  const int64_t n_ctx = ContextSize(f.model, model);
  if (prompt > n_ctx || (prompt == n_ctx && f.n_predict != 0)) {
    return Status::Error(fmt::format(
        "the prompt ({} tokens) fills the context size {} (raise it with -c, or use "
        "--kv-pos-shift with sink or h2o)",
        prompt, n_ctx));
  }
  const int64_t room = n_ctx - prompt;
  if (f.n_predict < 0) return room;
  if (f.n_predict > room) {
    Warn("-n {}: the context size {} holds {} tokens after the {}-token prompt; generation "
         "stops there",
         f.n_predict, n_ctx, room, prompt);
    return room;
  }
  return f.n_predict;
}

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int RunGenerate(const GenerateFlags& f) {
  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  // Without a vocabulary, --tokens still works and ids are printed.
  auto tokenizer = LoadTokenizer(model);
  std::vector<int32_t> prompt;
  if (!f.token_ids.empty()) {
    auto ids = ParseTokenIds(f.token_ids, "--tokens");
    if (!ids.ok()) return Fail(ids.status());
    prompt = std::move(ids).value();
  } else {
    if (!tokenizer.ok()) return Fail(tokenizer.status());
    std::string text = f.prompt;
    if (!f.prompt_file.empty()) {
      auto file = ReadTextFile(f.prompt_file);
      if (!file.ok()) return Fail(file.status());
      text = std::move(file).value();
    } else if (Status s = CheckUtf8(text, "--prompt"); !s.ok()) {
      return Fail(s);
    }
    prompt = tokenizer->Encode(text, /*add_special=*/true);
  }
  if (prompt.empty()) return Fail("the prompt is empty");
  if (!tokenizer.ok() && !f.reverse_prompts.empty()) {
    return Fail("-r/--reverse-prompt needs a model with a vocabulary (its text is matched)");
  }
  if (!tokenizer.ok() && !f.print_ids) {
    Warn("the model has no vocabulary: printing token ids, not text");
  }
  const bool print_text = !f.print_ids && tokenizer.ok();
  const bool print_ids = !print_text;

  auto n_generate = TokensToGenerate(f, model, static_cast<int64_t>(prompt.size()));
  if (!n_generate.ok()) return Fail(n_generate.status());
  // Percent budgets are of what the cache will hold: prompt + generated.
  const int64_t sequence = std::min<int64_t>(
      static_cast<int64_t>(prompt.size()) + *n_generate, ContextSize(f.model, model));
  auto options = MakeSessionOptions(
      f.model, {.sequence = sequence, .prompt = static_cast<int64_t>(prompt.size())});
  if (!options.ok()) return Fail(options.status());
  // Default: the whole prompt in one chunk ("prefill, then compress").
  if (options->max_chunk == 0) options->max_chunk = static_cast<int32_t>(prompt.size());
  auto session_result = Session::Create(model, *options);
  if (!session_result.ok()) return Fail(session_result.status());
  Session& session = **session_result;

  GenerateOptions generate;
  auto sampling = ResolveSampling(f.sampling, model.hparams().n_vocab);
  if (!sampling.ok()) return Fail(sampling.status());
  generate.sampling = std::move(sampling).value();
  auto grammar = ResolveGrammar(f.sampling);
  if (!grammar.ok()) return Fail(grammar.status());
  if (*grammar && !tokenizer.ok()) {
    return Fail("a grammar or JSON schema needs the model's vocabulary: " +
                tokenizer.status().message());
  }
  generate.grammar = std::move(grammar).value();
  if (print_text && !f.no_display_prompt) {
    std::fputs(tokenizer->Decode(prompt, /*remove_special=*/true).c_str(), stdout);
    std::fflush(stdout);
  }
  generate.max_tokens = static_cast<int32_t>(*n_generate);
  generate.stop_at_end = !f.ignore_eos;
  generate.stop = f.reverse_prompts;
  GenerateCallbacks callbacks;
  Clock::time_point t1;
  callbacks.on_prompt_fed = [&t1](size_t) { t1 = Clock::now(); };
  if (print_text) {
    callbacks.on_token = [&tokenizer](size_t, int32_t id) {
      std::fputs(tokenizer->TokenToPiece(id).c_str(), stdout);
      std::fflush(stdout);
    };
  }
  const auto t0 = Clock::now();
  auto generation = Generate(session.engine(), session.sequence(), prompt, generate,
                             tokenizer.ok() ? &*tokenizer : nullptr, callbacks);
  if (!generation.ok()) return Fail(generation.status());
  const auto t2 = Clock::now();
  const int32_t n_generated = static_cast<int32_t>(generation->ids.size());
  if (print_text) std::fputs("\n", stdout);
  if (print_ids) {
    std::vector<int32_t> all = f.no_display_prompt ? std::vector<int32_t>() : prompt;
    all.insert(all.end(), generation->ids.begin(), generation->ids.end());
    std::string line;
    for (size_t i = 0; i < all.size(); ++i) line += (i ? " " : "") + std::to_string(all[i]);
    std::printf("%s\n", line.c_str());
  }
  if (!f.model.kv_dump_path.empty()) {
    if (Status s = WriteKvDump(session.cache(), f.model.kv_dump_path); !s.ok()) return Fail(s);
  }

  Note("\nprompt: {} tokens in {:.3f} s ({:.1f} tok/s); generated: {} tokens in {:.3f} s "
       "({:.1f} tok/s)",
       prompt.size(), Seconds(t0, t1), prompt.size() / std::max(1e-9, Seconds(t0, t1)),
       n_generated, Seconds(t1, t2), n_generated / std::max(1e-9, Seconds(t1, t2)));
  Note(DescribeKvMemory(session.sequence(), session.n_past()));
  // Last, with the run's figures: a failed run prints one error line only.
  NoteSeed(f.sampling, generate.sampling);
  return 0;
}

}  // namespace

Command RegisterGenerate(CLI::App& app) {
  auto f = std::make_shared<GenerateFlags>();
  CLI::App* cmd = app.add_subcommand("generate", "generate text from a prompt");
  AddModelFlags(*cmd, f->model, /*default_chunk=*/0);
  cmd->get_option("--kv")->check(OnePolicy("generate"));
  auto* prompt = cmd->add_option("-p,--prompt", f->prompt, "prompt text (BOS first when the vocabulary adds one)");
  auto* file =
      cmd->add_option("-f,--file", f->prompt_file, "prompt from a text file (-: standard input)");
  auto* ids = cmd->add_option("--tokens", f->token_ids, "prompt as token ids, e.g. \"1 403 407\"");
  // RequireOneOf below says the same at parse time; these put it in --help.
  prompt->excludes(file)->excludes(ids);
  file->excludes(ids);
  cmd->add_option("-n,--n-predict", f->n_predict,
                  "tokens to generate (-1: until the context is full; past it, stops there)")
      ->check(MinusOneOrMore())
      ->capture_default_str();
  AddSamplingFlags(*cmd, f->sampling);
  cmd->add_flag("--print-ids", f->print_ids, "print the token ids (prompt + generated) instead of text");
  cmd->add_flag("--ignore-eos", f->ignore_eos, "keep generating after end-of-sequence");
  cmd->add_option("-r,--reverse-prompt", f->reverse_prompts,
                  "stop once the generated text contains this (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--no-display-prompt", f->no_display_prompt,
                "print only the generated text (or ids), not the prompt");
  RequireOneOf(*cmd, {"--prompt", "--file", "--tokens"},
               "a prompt (-p TEXT, -f FILE or --tokens IDS)");
  return {cmd, [f] { return RunGenerate(*f); }};
}

}  // namespace h2o::cli
