// h2o chat: an interactive conversation in the model's chat template, its
// KV cache carried from turn to turn under the chosen policy. The cache
// holds every reply's tokens as they were sampled, and each turn feeds only
// what the template writes after the last reply (chat/next_turn.h), so no
// turn feeds the history again, however the template would write a reply.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "chat/next_turn.h"
#include "chat/system_prompt.h"
#include "chat_file.h"
#include "chat_input.h"
#include "chat_template_flag.h"
#include "cli_common.h"
#include "cli_errors.h"
#include "cli_log.h"
#include "commands.h"
#include "core/byte_size.h"
#include "runtime/generate.h"
#include "runtime/state_file.h"

namespace h2o::cli {
namespace {

struct ChatFlags {
  ModelFlags model;
  std::string system;
  std::string chat_template;
  std::string load;
  int32_t n_predict = 512;
  bool ignore_eos = false;
  SamplingFlags sampling;
};

constexpr const char* kHelp =
    "  /help         this list\n"
    "  /clear        start over (the system message stays)\n"
    "  /save FILE    write the conversation (JSON) and the cache's state (FILE.kv)\n"
    "  /load FILE    go on with a saved conversation\n"
    "  /kv           what the KV cache holds now\n"
    "  //text        send a message that begins with '/'\n"
    "  /exit         leave (as Ctrl-D)\n"
    "  Ctrl-C stops a reply; at the prompt it asks before leaving. Ctrl-D leaves.\n";

class Chat {
 public:
  Chat(const Model& model, const Tokenizer& tokenizer, ChatTemplate chat, Session& session,
       const ChatFlags& flags, SamplerOptions sampling, std::shared_ptr<const Grammar> grammar)
      : model_(model),
        tokenizer_(tokenizer),
        chat_(chat),
        session_(session),
        flags_(flags),
        sampling_(std::move(sampling)),
        grammar_(std::move(grammar)) {
    Clear();
  }

  // Answers one user message, streaming the reply.
  Status Turn(const std::string& text);
  void Clear();
  Status Save(const std::string& path) const;
  Status Load(const std::string& path);
  void PrintKv() const;

 private:
  // What this turn feeds: after a reply, the template's text that follows
  // it; with nothing in the cache, the whole conversation.
  Result<std::vector<int32_t>> TurnTokens();
  Result<Generation> Reply(std::span<const int32_t> tokens);
  // Empties the cache (and what it held), the messages kept.
  void ForgetCache() {
    session_.Reset();
    fed_.clear();
  }

  const Model& model_;
  const Tokenizer& tokenizer_;
  const ChatTemplate chat_;
  Session& session_;
  const ChatFlags& flags_;
  const SamplerOptions sampling_;
  const std::shared_ptr<const Grammar> grammar_;
  std::vector<ChatMessage> messages_;
  std::vector<int32_t> fed_;  // what the cache holds, in the order fed
};

void Chat::Clear() {
  ForgetCache();
  messages_.clear();
  if (!flags_.system.empty()) messages_.push_back({"system", flags_.system});
}

Result<std::vector<int32_t>> Chat::TurnTokens() {
  if (!fed_.empty()) {
    auto text = TextAfterReply(chat_, messages_);
    if (text.ok()) return tokenizer_.Encode(*text, /*add_special=*/false);
    Warn("{}: the conversation is fed again", text.status().message());
    ForgetCache();
  }
  auto text = RenderChat(chat_, messages_);
  if (!text.ok()) return text.status();
  return tokenizer_.Encode(*text, /*add_special=*/true);
}

// Feeds `tokens`, then samples and feeds until an end-of-generation token,
// -n tokens, the end of the context or Ctrl-C. Every generated token is
// fed, so the cache holds the whole reply.
Result<Generation> Chat::Reply(std::span<const int32_t> tokens) {
  H2O_RETURN_IF_ERROR(session_.Eval(tokens));
  fed_.insert(fed_.end(), tokens.begin(), tokens.end());
  GenerateOptions options;
  // -n -1: no limit of its own; positions that shift have no end.
  const int64_t room = session_.n_ctx() - session_.n_past();
  const int64_t wanted =
      flags_.n_predict < 0 ? std::numeric_limits<int32_t>::max() : flags_.n_predict;
  options.max_tokens = static_cast<int32_t>(
      session_.sequence().pos_shift() ? wanted : std::min<int64_t>(wanted, room));
  options.stop_at_end = !flags_.ignore_eos;
  options.sampling = sampling_;
  options.grammar = grammar_;  // each reply matches it
  GenerationState state(options, &tokenizer_);
  state.Saw(fed_);  // the repeat penalties see the conversation
  while (!Interrupted()) {
    const std::optional<int32_t> id = state.Next(session_.last_logits());
    if (!id) break;  // an end-of-generation token: the next turn's text closes the reply
    std::fputs(tokenizer_.TokenToPiece(*id).c_str(), stdout);
    std::fflush(stdout);
    const int32_t next[] = {*id};
    H2O_RETURN_IF_ERROR(session_.Eval(next));
    fed_.push_back(*id);
    if (state.done()) break;
  }
  return state.Take();
}

Status Chat::Turn(const std::string& text) {
  messages_.push_back({"user", text});
  auto tokens = TurnTokens();
  if (tokens.ok() &&
      session_.n_past() + static_cast<int64_t>(tokens->size()) + 1 > session_.n_ctx() &&
      !session_.sequence().pos_shift()) {
    tokens = Status::Error(
        fmt::format("the conversation has reached the context of {} tokens: /save it, /clear, or "
                    "start again with a larger -c (or --kv-pos-shift with sink or h2o)",
                    session_.n_ctx()));
  }
  if (!tokens.ok()) {
    messages_.pop_back();
    return tokens.status();
  }
  auto reply = Reply(*tokens);
  if (!reply.ok()) {
    // The cache may hold part of this turn: start the next one afresh.
    messages_.pop_back();
    ForgetCache();
    return reply.status();
  }
  std::fputs(Interrupted() ? " [stopped]\n" : "\n", stdout);
  std::fflush(stdout);
  messages_.push_back({"assistant", reply->text});
  Note("[{} prompt tokens fed this turn] {}", tokens->size(),
       DescribeKvMemory(session_.sequence(), session_.n_past()));
  return Status::Ok();
}

Status Chat::Save(const std::string& path) const {
  const std::string state_path = ChatStatePath(path);
  SavedChat saved{ChatTemplateName(chat_), messages_, static_cast<int64_t>(fed_.size())};
  if (!fed_.empty()) {
    SequenceState state;
    session_.sequence().SaveState(state);
    auto bytes = WriteStateFile(state_path, ModelFingerprint(model_), fed_, state);
    if (!bytes.ok()) return bytes.status();
  } else {
    std::error_code ignored;  // a state from an earlier save would not fit
    std::filesystem::remove(state_path, ignored);
  }
  H2O_RETURN_IF_ERROR(WriteChatFile(path, saved));
  fmt::print("saved {} messages to {}{}\n", messages_.size(), path,
             fed_.empty() ? ""
                          : fmt::format(" and the cache's state ({} tokens) to {}", fed_.size(),
                                        state_path));
  return Status::Ok();
}

Status Chat::Load(const std::string& path) {
  auto saved = ReadChatFile(path);
  if (!saved.ok()) return saved.status();
  if (!saved->chat_template.empty() && saved->chat_template != ChatTemplateName(chat_)) {
    Warn("{} was saved in the {} template; this chat writes {}", path, saved->chat_template,
         ChatTemplateName(chat_));
  }
  Clear();
  messages_ = std::move(saved->messages);
  // Only a state of this model, plan and conversation resumes; otherwise
  // the next message feeds the conversation afresh.
  std::string why_not;
  const std::string state_path = ChatStatePath(path);
  if (saved->kv_tokens == 0 || messages_.empty() || messages_.back().role != "assistant") {
    why_not = "none was saved";
  } else if (auto stored = ReadStateFile(state_path, ModelFingerprint(model_)); !stored.ok()) {
    why_not = stored.status().message();
  } else if (static_cast<int64_t>(stored->tokens.size()) != saved->kv_tokens) {
    why_not = state_path + " was saved with another conversation";
  } else if (!session_.sequence().CanLoadState(stored->state)) {
    why_not = state_path + " does not fit this chat's model, KV policy, types or context";
  } else {
    session_.sequence().LoadState(stored->state);
    fed_ = std::move(stored->tokens);
  }
  fmt::print("loaded {} messages from {}", messages_.size(), path);
  if (why_not.empty()) {
    fmt::print("; the cache goes on from its state ({} tokens)\n", fed_.size());
  } else {
    fmt::print("; they are fed with the next message (no cache state: {})\n", why_not);
  }
  return Status::Ok();
}

void Chat::PrintKv() const {
  const KvCache& cache = session_.cache();
  const KvCacheConfig& config = cache.config();
  fmt::print("{}\n", DescribeKvMemory(session_.sequence(), session_.n_past()));
  int32_t least = std::numeric_limits<int32_t>::max(), most = 0;
  for (int32_t layer = 0; layer < config.n_layer; ++layer) {
    for (int32_t head = 0; head < config.n_head_kv; ++head) {
      least = std::min(least, cache.count(layer, head));
      most = std::max(most, cache.count(layer, head));
    }
  }
  if (config.n_layer == 0 || config.n_head_kv == 0) least = 0;
  fmt::print(
      "{} messages, {} tokens fed of a {}-token context; each KV head holds {}{} of them: {} of "
      "K/V rows, {} allocated\n",
      messages_.size(), session_.n_past(), session_.n_ctx(), least,
      least == most ? "" : fmt::format(" to {}", most), FormatBytes(cache.HeldBytes()),
      FormatBytes(cache.AllocatedBytes()));
}

enum class Next { kGoOn, kLeave };

// A line that begins with '/' (but not "//"): one of kHelp's commands.
Next RunCommand(Chat& chat, const std::string& line) {
  const size_t space = line.find(' ');
  const std::string name = line.substr(0, space);
  std::string argument = space == std::string::npos ? "" : line.substr(space + 1);
  argument.erase(0, argument.find_first_not_of(' '));
  argument.erase(argument.find_last_not_of(' ') + 1);
  Status status = Status::Ok();
  if (name == "/help" || name == "/?") {
    std::fputs(kHelp, stdout);
  } else if (name == "/clear") {
    chat.Clear();
    std::fputs("cleared: the next message begins a new conversation\n", stdout);
  } else if ((name == "/save" || name == "/load") && argument.empty()) {
    status = Status::Error(name + " needs a file name: " + name + " FILE");
  } else if (name == "/save") {
    status = chat.Save(argument);
  } else if (name == "/load") {
    status = chat.Load(argument);
  } else if (name == "/kv") {
    chat.PrintKv();
  } else if (name == "/exit" || name == "/quit" || name == "/bye") {
    return Next::kLeave;
  } else {
    status = Status::Error("unknown command " + name + " (/help lists them)");
  }
  if (!status.ok()) Fail(status);
  return Next::kGoOn;
}

// Ctrl-C at the prompt: leave only when the user says so (y, or Ctrl-C or
// Ctrl-D again).
bool ConfirmLeave() {
  ClearInterrupt();
  std::fputs("\n", stdout);
  const Input answer = ReadInput("leave the chat? [y/N] ");
  if (answer.end != InputEnd::kLine) return true;
  return answer.line == "y" || answer.line == "Y" || answer.line == "yes";
}

int RunChat(const ChatFlags& f) {
  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  auto tokenizer = LoadTokenizer(model);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  auto chat_template = PickChatTemplate(f.chat_template, model);
  if (!chat_template.ok()) return Fail(chat_template.status());
  if (!*chat_template) {
    return Fail(
        "the model's GGUF has no chat template h2o recognizes; name one with --chat-template "
        "(llama2, llama3, chatml, phi3, gemma, mistral, zephyr)");
  }
  const int64_t n_ctx = ContextSize(f.model, model);
  // Percent budgets are of the whole context: a conversation has no prompt
  // length known in advance. --kv-keep -1 pins the system prompt: what
  // every turn's prompt shares with it (a first user message stands for
  // them).
  std::vector<ChatMessage> probe;
  if (!f.system.empty()) probe.push_back({"system", f.system});
  probe.push_back({"user", "?"});
  auto options = MakeSessionOptions(
      f.model,
      {.sequence = n_ctx, .keep_all = SystemPromptTokens(**chat_template, probe, *tokenizer)});
  if (!options.ok()) return Fail(options.status());
  auto session = Session::Create(model, *options);
  if (!session.ok()) return Fail(session.status());
  auto sampling = ResolveSampling(f.sampling, model.hparams().n_vocab);
  if (!sampling.ok()) return Fail(sampling.status());
  NoteSeed(f.sampling, *sampling);
  auto grammar = ResolveGrammar(f.sampling);
  if (!grammar.ok()) return Fail(grammar.status());

  Chat chat(model, *tokenizer, **chat_template, **session, f, std::move(sampling).value(),
            std::move(grammar).value());
  if (!f.load.empty()) {
    if (Status loaded = chat.Load(f.load); !loaded.ok()) return Fail(loaded);
  }
  CatchInterrupt();
  Note("h2o chat ({} template): /help lists the commands; Ctrl-C stops a reply, Ctrl-D leaves",
       ChatTemplateName(**chat_template));
  for (;;) {
    ClearInterrupt();
    const Input input = ReadInput("> ");
    if (input.end == InputEnd::kEndOfInput) break;
    if (input.end == InputEnd::kInterrupted) {
      if (ConfirmLeave()) break;
      continue;
    }
    if (input.line.empty()) continue;
    if (input.line[0] == '/' && input.line.rfind("//", 0) != 0) {
      if (RunCommand(chat, input.line) == Next::kLeave) break;
      continue;
    }
    const std::string text = input.line.rfind("//", 0) == 0 ? input.line.substr(1) : input.line;
    if (Status turn = chat.Turn(text); !turn.ok()) Fail(turn);
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
  cmd->add_option("--load", f->load, "go on with a conversation saved by /save FILE")
      ->type_name("FILE");
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
