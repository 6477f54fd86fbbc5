// The seven formats are data: two families, each a table row.
//
// Turn templates (chatml, phi3, zephyr, llama3, gemma) write every message
// as open + role + after_role + content + close, and the generation prompt
// as open + assistant role + after_role.
//
// [INST] templates (llama2, mistral) write user text inside
// "[INST] ... [/INST]" blocks, the system text inside the block it falls in,
// and the assistant's reply right after " [/INST]", closed by "</s>"; a new
// block opens at the next message after a reply. llama.cpp writes the first
// "[INST] " without a BOS ("<s>") in front, as we do everywhere.
#include "chat/chat_template.h"

#include <array>
#include <string>

namespace h2o {
namespace {

enum class Family { kTurns, kInstBlocks };

struct TurnFormat {
  std::string_view open;            // before the role name
  std::string_view after_role;      // between the role name and the content
  std::string_view close;           // after the content
  std::string_view assistant_role;  // the assistant's role as the text names it
  bool trim_content;                // content stripped of leading/trailing whitespace
  // The template has no system role: the system text (trimmed) opens the
  // next user turn, followed by a blank line.
  bool system_into_next_user;
};

struct InstFormat {
  std::string_view system_open;  // around the system text, inside [INST]
  std::string_view system_close;
  bool trim_content;
};

struct TemplateSpec {
  ChatTemplate id;
  const char* name;
  Family family;
  TurnFormat turns;  // when family == kTurns
  InstFormat inst;   // when family == kInstBlocks
};

// The BOS text of the HF Jinja ("<|begin_of_text|>", "<s>", "<bos>") is left
// out of every format: the tokenizer adds BOS itself (llama.cpp's built-in
// formats leave it out for the same reason).
constexpr std::array<TemplateSpec, 7> kTemplates = {{
    {ChatTemplate::kLlama2,
     "llama2",
     Family::kInstBlocks,
     {},
     // llama.cpp "llama2-sys-strip", its pick for Llama-2-chat's Jinja.
     {"<<SYS>>\n", "\n<</SYS>>\n\n", /*trim_content=*/true}},
    {ChatTemplate::kLlama3,
     "llama3",
     Family::kTurns,
     {"<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", "assistant",
      /*trim_content=*/true, /*system_into_next_user=*/false},
     {}},
    {ChatTemplate::kChatml,
     "chatml",
     Family::kTurns,
     {"<|im_start|>", "\n", "<|im_end|>\n", "assistant", /*trim_content=*/false,
      /*system_into_next_user=*/false},
     {}},
    {ChatTemplate::kPhi3,
     "phi3",
     Family::kTurns,
     {"<|", "|>\n", "<|end|>\n", "assistant", /*trim_content=*/false,
      /*system_into_next_user=*/false},
     {}},
    {ChatTemplate::kGemma,
     "gemma",
     Family::kTurns,
     {"<start_of_turn>", "\n", "<end_of_turn>\n", "model", /*trim_content=*/true,
      /*system_into_next_user=*/true},
     {}},
    {ChatTemplate::kMistral,
     "mistral",
     Family::kInstBlocks,
     {},
     // llama.cpp "llama2" (its name "mistral" maps there too): no system
     // block, the system text is a line of the first instruction.
     {"", "\n", /*trim_content=*/false}},
    {ChatTemplate::kZephyr,
     "zephyr",
     Family::kTurns,
     // llama.cpp closes turns with "<|endoftext|>" (StableLM 2 Zephyr's EOS);
     // zephyr-7b-beta's Jinja closes them with its eos_token "</s>" instead.
     {"<|", "|>\n", "<|endoftext|>\n", "assistant", /*trim_content=*/false,
      /*system_into_next_user=*/false},
     {}},
}};

const TemplateSpec& SpecOf(ChatTemplate t) {
  for (const TemplateSpec& spec : kTemplates) {
    if (spec.id == t) return spec;
  }
  H2O_CHECK(false && "ChatTemplate value missing from kTemplates");
  return kTemplates[0];
}

// Whitespace as C's isspace in the "C" locale, which llama.cpp's trim uses.
bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

Status CheckRoles(std::span<const ChatMessage> messages) {
  if (messages.empty()) return Status::Error("chat has no messages");
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant") {
      return Status::Error("messages[" + std::to_string(i) + "]: unknown role '" + role +
                           "' (system, user, assistant)");
    }
  }
  return Status::Ok();
}

Result<std::string> RenderTurns(const TemplateSpec& spec, std::span<const ChatMessage> messages) {
  const TurnFormat& f = spec.turns;
  auto content_of = [&](const ChatMessage& m) {
    return f.trim_content ? Trim(m.content) : std::string_view(m.content);
  };
  std::string out;
  std::string pending_system;  // system_into_next_user: text not yet written
  for (const ChatMessage& m : messages) {
    if (f.system_into_next_user && m.role == "system") {
      // Several system messages run together, as in llama.cpp.
      pending_system += Trim(m.content);
      continue;
    }
    const bool is_assistant = m.role == "assistant";
    out += f.open;
    out += is_assistant ? f.assistant_role : std::string_view(m.role);
    out += f.after_role;
    if (!pending_system.empty() && !is_assistant) {
      out += pending_system;
      out += "\n\n";
      pending_system.clear();
    }
    out += content_of(m);
    out += f.close;
  }
  if (!pending_system.empty()) {
    return Status::Error(std::string(spec.name) +
                         " has no system role and no user message follows the system "
                         "message to carry its text");
  }
  out += f.open;
  out += f.assistant_role;
  out += f.after_role;
  return out;
}

std::string RenderInstBlocks(const InstFormat& f, std::span<const ChatMessage> messages) {
  std::string out;
  bool block_open = false;
  for (const ChatMessage& m : messages) {
    const std::string_view content = f.trim_content ? Trim(m.content) : std::string_view(m.content);
    if (!block_open) {
      out += "[INST] ";
      block_open = true;
    }
    if (m.role == "system") {
      out += f.system_open;
      out += content;
      out += f.system_close;
    } else if (m.role == "user") {
      out += content;
      out += " [/INST]";
    } else {  // assistant: its reply closes the block
      out += content;
      out += "</s>";
      block_open = false;
    }
  }
  return out;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Whether the Jinja closes the "<|user|>" turn with an end-of-sequence
// marker inside the same expression ('<|user|>\n' + message['content'] +
// eos_token), as Zephyr does; Falcon 3, which shares the role markers,
// closes it with a newline.
bool UserTurnEndsWithEos(std::string_view jinja) {
  const size_t user = jinja.find("<|user|>");
  if (user == std::string_view::npos) return false;
  const size_t end = jinja.find("}}", user);
  const std::string_view expr =
      jinja.substr(user, end == std::string_view::npos ? end : end - user);
  return Contains(expr, "eos_token") || Contains(expr, "</s>") || Contains(expr, "<|endoftext|>");
}

}  // namespace

const char* ChatTemplateName(ChatTemplate t) { return SpecOf(t).name; }

Result<ChatTemplate> ChatTemplateByName(std::string_view name) {
  std::string known;
  for (const TemplateSpec& spec : kTemplates) {
    if (name == spec.name) return spec.id;
    known += known.empty() ? "" : ", ";
    known += spec.name;
  }
  return Status::Error("unknown chat template '" + std::string(name) + "' (" + known + ")");
}

// Follows the order of llama.cpp's llm_chat_detect_template, because a
// template can carry several families' markers (Phi-3's "<|user|>" is also
// Zephyr's). Where llama.cpp would pick a format that we do not have, the
// answer is nullopt rather than a near miss.
std::optional<ChatTemplate> DetectChatTemplate(std::string_view jinja) {
  // Some GGUFs store a template's name instead of Jinja; llama.cpp accepts it.
  if (auto by_name = ChatTemplateByName(jinja); by_name.ok()) return by_name.value();

  const auto has = [&](std::string_view marker) { return Contains(jinja, marker); };
  if (has("<|im_start|>")) {
    // Phi-4 separates role and content with <|im_sep|>; SmolVLM's
    // <|im_start|> is its BOS and its turns end with <end_of_utterance>.
    if (has("<|im_sep|>") || has("<end_of_utterance>")) return std::nullopt;
    return ChatTemplate::kChatml;  // also Qwen 1.5 to 3
  }
  if (has("[INST]")) {
    // Mistral's own later formats (v1 " [INST] " with the system text, v3
    // with [AVAILABLE_TOOLS], v7 with [SYSTEM_PROMPT]) space [INST] differently.
    if (has("[SYSTEM_PROMPT]") || has("[AVAILABLE_TOOLS]") || has("' [INST] ' + system_message")) {
      return std::nullopt;
    }
    // llama.cpp's variants with system support: "llama2-sys-strip" (which it
    // picks for Llama-2-chat, content.strip()), "llama2-sys" and
    // "llama2-sys-bos" (<<SYS>>). We render the first for all three; the
    // others differ only in whitespace trimming and a "<s>" before later turns.
    if (has("<<SYS>>") || has("content.strip()")) return ChatTemplate::kLlama2;
    return ChatTemplate::kMistral;
  }
  if (has("<|assistant|>") && has("<|end|>")) return ChatTemplate::kPhi3;
  if (has("<|user|>")) {
    if (UserTurnEndsWithEos(jinja)) return ChatTemplate::kZephyr;
    // Falcon 3 and GLM-Edge share the markers but not the format.
    if (has("<|assistant|>")) return std::nullopt;
    if (has("<|endoftext|>")) return ChatTemplate::kZephyr;  // llama.cpp's own test
  }
  // StableLM 2 Zephyr builds the marker from the role name.
  if (has("'<|' + message['role'] + '|>'") && has("<|endoftext|>")) {
    return ChatTemplate::kZephyr;
  }
  if (has("<start_of_turn>")) return ChatTemplate::kGemma;
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatTemplate::kLlama3;
  return std::nullopt;
}

Result<std::string> RenderChat(ChatTemplate t, std::span<const ChatMessage> messages) {
  H2O_RETURN_IF_ERROR(CheckRoles(messages));
  const TemplateSpec& spec = SpecOf(t);
  if (spec.family == Family::kInstBlocks) return RenderInstBlocks(spec.inst, messages);
  return RenderTurns(spec, messages);
}

}  // namespace h2o
