// h2o chat: an interactive conversation in the model's chat template, its
// KV cache carried from turn to turn under the chosen policy (each turn
// feeds only what the template adds after the text already in the cache).
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "chat/system_prompt.h"
#include "chat_template_flag.h"
#include "cli_common.h"
#include "cli_errors.h"
#include "cli_log.h"
#include "commands.h"
#include "runtime/generate.h"

namespace h2o::cli {
namespace {

struct ChatFlags {
  ModelFlags model;
  std::string system;
  std::string chat_template;
  int32_t n_predict = 512;
  bool ignore_eos = false;
  SamplingFlags sampling;
};

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted = true; }

// SIGINT sets a flag instead of ending the process, and interrupts a
// blocking read (no SA_RESTART): Ctrl-C stops a reply, or the chat when
// it waits for input.
void CatchInterrupt() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

// Streams one reply: feeds `tokens`, then samples and feeds until an
// end-of-generation token, n_predict tokens or Ctrl-C. Every generated
// token is fed, so the cache holds the whole reply. Returns its text.
Result<std::string> Reply(Session& session, const Tokenizer& tokenizer,
                          std::span<const int32_t> tokens, const ChatFlags& f,
                          const SamplerOptions& sampling) {
  H2O_RETURN_IF_ERROR(session.Eval(tokens));
  GenerateOptions options;
  // A reply stops at the end of the context (unless positions shift).
  // -n -1: no limit of its own.
  const int64_t room = session.n_ctx() - session.n_past();
  const int64_t wanted = f.n_predict < 0 ? std::numeric_limits<int32_t>::max() : f.n_predict;
  options.max_tokens = static_cast<int32_t>(
      session.sequence().pos_shift() ? wanted : std::min<int64_t>(wanted, room));
  options.stop_at_end = !f.ignore_eos;
  options.sampling = sampling;
  GenerationState state(options, &tokenizer);
  state.Saw(tokens);
  while (!g_interrupted) {
    const std::optional<int32_t> id = state.Next(session.last_logits());
    if (!id) break;  // an end-of-generation token: not fed
    std::fputs(tokenizer.TokenToPiece(*id).c_str(), stdout);
    std::fflush(stdout);
    const int32_t next[] = {*id};
    H2O_RETURN_IF_ERROR(session.Eval(next));
    if (state.done()) break;
  }
  return state.generation().text;
}

int RunChat(const ChatFlags& f) {
  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  auto tokenizer = LoadTokenizer(model);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  auto chat = PickChatTemplate(f.chat_template, model);
  if (!chat.ok()) return Fail(chat.status());
  if (!*chat) {
    return Fail(
        "the model's GGUF has no chat template h2o recognizes; name one with --chat-template "
        "(llama2, llama3, chatml, phi3, gemma, mistral, zephyr)");
  }
  const int64_t n_ctx = f.model.n_ctx > 0 ? f.model.n_ctx : model.hparams().n_ctx_train;
  // Percent budgets are of the whole context: a conversation has no prompt
  // length known in advance.
  std::vector<ChatMessage> messages;
  if (!f.system.empty()) messages.push_back({"system", f.system});
  // --kv-keep -1 pins the system prompt: what every turn's prompt shares
  // with it (a first user message stands for them).
  std::vector<ChatMessage> probe = messages;
  probe.push_back({"user", "?"});
  auto options = MakeSessionOptions(
      f.model, {.sequence = n_ctx, .keep_all = SystemPromptTokens(**chat, probe, *tokenizer)});
  if (!options.ok()) return Fail(options.status());
  auto session_result = Session::Create(model, *options);
  if (!session_result.ok()) return Fail(session_result.status());
  Session& session = **session_result;
  auto resolved = ResolveSampling(f.sampling, model.hparams().n_vocab);
  if (!resolved.ok()) return Fail(resolved.status());
  const SamplerOptions sampling = std::move(resolved).value();
  NoteSeed(f.sampling, sampling);

  CatchInterrupt();
  std::string in_cache;  // the text whose tokens the cache holds
  Note("h2o chat ({} template): Ctrl-C stops a reply, Ctrl-D ends", ChatTemplateName(**chat));
  for (;;) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    g_interrupted = false;
    std::string line;
    if (!std::getline(std::cin, line) || g_interrupted) break;
    if (line.empty()) continue;
    messages.push_back({"user", line});
    auto text = RenderChat(**chat, messages);
    if (!text.ok()) return Fail(text.status());
    // Only what follows the cached text is fed; should the template write
    // the past differently now, the conversation is fed afresh.
    std::vector<int32_t> tokens;
    if (!in_cache.empty() && text->compare(0, in_cache.size(), in_cache) == 0) {
      tokens = tokenizer->Encode(std::string_view(*text).substr(in_cache.size()), false);
    } else {
      session.Reset();
      tokens = tokenizer->Encode(*text, true);
    }
    if (session.n_past() + static_cast<int64_t>(tokens.size()) + 1 > session.n_ctx() &&
        !options->kv_pos_shift) {
      return Fail(
          fmt::format("the conversation has reached the context of {} tokens (raise -c, "
                      "or use --kv-pos-shift with sink or h2o)",
                      session.n_ctx()));
    }
    auto reply = Reply(session, *tokenizer, tokens, f, sampling);
    if (!reply.ok()) return Fail(reply.status());
    std::fputs(g_interrupted ? " [stopped]\n" : "\n", stdout);
    std::fflush(stdout);
    messages.push_back({"assistant", *reply});
    in_cache = *text + *reply;
    Note("[{} prompt tokens fed this turn] {}", tokens.size(),
         DescribeKvMemory(session.sequence(), session.n_past()));
  }
  std::fputs("\n", stdout);
  return 0;
}

}  // namespace

Command RegisterChat(CLI::App& app) {
  auto f = std::make_shared<ChatFlags>();
  CLI::App* cmd = app.add_subcommand(
      "chat", "talk with a model in its chat template, the KV cache carried across turns");
  // Turns are short: a small chunk keeps an evicting cache's chunk slots
  // (allocated next to its budget) small.
  AddModelFlags(*cmd, f->model, /*default_chunk=*/64);
  cmd->get_option("--kv")->check(OnePolicy("chat"));
  cmd->add_option("--system", f->system, "a system message before the conversation");
  AddChatTemplateFlag(*cmd, f->chat_template);
  cmd->add_option("-n,--n-predict", f->n_predict,
                  "most tokens per reply (-1: no limit but the context's)")
      ->check(MinusOneOrMore())
      ->check([](const std::string& v) -> std::string {
        return v == "0" ? "a reply needs at least 1 token (-1: no limit)" : "";
      })
      ->capture_default_str();
  AddSamplingFlags(*cmd, f->sampling);
  cmd->add_flag("--ignore-eos", f->ignore_eos, "keep replying past end-of-generation tokens");
  return {cmd, [f] { return RunChat(*f); }};
}

}  // namespace h2o::cli
