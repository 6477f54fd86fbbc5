// h2o generate: continue a prompt, streaming text to stdout.
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli_common.h"
#include "cli_errors.h"
#include "commands.h"
#include "runtime/generate.h"
#include "tokenizer/utf8.h"

namespace h2o::cli {
namespace {

struct GenerateFlags {
  ModelFlags model;
  std::string prompt;
  std::string token_ids;
  int32_t n_predict = 128;
  SamplerOptions sampling;
  bool print_ids = false;
  bool ignore_eos = false;
};

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
    if (Status s = CheckUtf8(f.prompt, "--prompt"); !s.ok()) return Fail(s);
    prompt = tokenizer->Encode(f.prompt, /*add_special=*/true);
  }
  if (prompt.empty()) return Fail("the prompt is empty");
  const bool print_text = !f.print_ids && tokenizer.ok();

  auto options = MakeSessionOptions(f.model, static_cast<int64_t>(prompt.size()));
  if (!options.ok()) return Fail(options.status());
  // Default: the whole prompt in one chunk ("prefill, then compress").
  if (options->max_chunk == 0) options->max_chunk = static_cast<int32_t>(prompt.size());
  auto session_result = Session::Create(model, *options);
  if (!session_result.ok()) return Fail(session_result.status());
  Session& session = **session_result;
  if (!options->kv_pos_shift &&
      static_cast<int64_t>(prompt.size()) + f.n_predict > session.n_ctx()) {
    return Fail(fmt::format("prompt ({} tokens) + -n {} exceeds the context size {} (raise it "
                            "with -c, or use --kv-pos-shift with sink or h2o)",
                            prompt.size(), f.n_predict, session.n_ctx()));
  }

  if (print_text) {
    std::fputs(tokenizer->Decode(prompt, /*remove_special=*/true).c_str(), stdout);
    std::fflush(stdout);
  }
  GenerateOptions generate;
  generate.max_tokens = f.n_predict;
  generate.stop_at_end = !f.ignore_eos;
  generate.sampling = f.sampling;
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
  if (f.print_ids) {
    std::vector<int32_t> all = prompt;
    all.insert(all.end(), generation->ids.begin(), generation->ids.end());
    std::string line;
    for (size_t i = 0; i < all.size(); ++i) line += (i ? " " : "") + std::to_string(all[i]);
    std::printf("%s\n", line.c_str());
  }
  if (!f.model.kv_dump_path.empty()) {
    if (Status s = WriteKvDump(session.cache(), f.model.kv_dump_path); !s.ok()) return Fail(s);
  }

  std::fprintf(stderr,
               "\nprompt: %zu tokens in %.3f s (%.1f tok/s); generated: %d tokens in %.3f s "
               "(%.1f tok/s)\n",
               prompt.size(), Seconds(t0, t1), prompt.size() / std::max(1e-9, Seconds(t0, t1)),
               n_generated, Seconds(t1, t2), n_generated / std::max(1e-9, Seconds(t1, t2)));
  std::fprintf(stderr, "%s\n", DescribeKvMemory(session.sequence(), session.n_past()).c_str());
  return 0;
}

}  // namespace

Command RegisterGenerate(CLI::App& app) {
  auto f = std::make_shared<GenerateFlags>();
  CLI::App* cmd = app.add_subcommand("generate", "generate text from a prompt");
  AddModelFlags(*cmd, f->model, /*default_chunk=*/0);
  cmd->get_option("--kv")->check(OnePolicy("generate"));
  auto* prompt = cmd->add_option("-p,--prompt", f->prompt,
                                 "prompt text (BOS first when the vocabulary adds one)");
  auto* ids = cmd->add_option("--tokens", f->token_ids, "prompt as token ids, e.g. \"1 403 407\"");
  prompt->excludes(ids);
  cmd->add_option("-n,--n-predict", f->n_predict, "tokens to generate")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  AddSamplingFlags(*cmd, f->sampling);
  cmd->add_flag("--print-ids", f->print_ids, "print the token ids (prompt + generated) instead of text");
  cmd->add_flag("--ignore-eos", f->ignore_eos, "keep generating after end-of-sequence");
  RequireEither(*cmd, "--prompt", "--tokens", "a prompt (-p TEXT or --tokens IDS)");
  return {cmd, [f] { return RunGenerate(*f); }};
}

}  // namespace h2o::cli
