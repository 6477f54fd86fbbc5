// Chat templates: a conversation (system/user/assistant messages) written as
// the prompt text an instruct model was trained on, for /v1/chat/completions.
//
// The formats are those of llama.cpp's built-in (non-Jinja) templates
// (src/llama-chat.cpp, llm_chat_apply_template), so a prompt here tokenizes
// to the same ids as there. We do not run the GGUF's Jinja: we recognize it
// (DetectChatTemplate) and render the matching built-in format.
//
// All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace h2o {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// Which llama.cpp format each one is (the names differ for two of them):
//   kLlama2  llama.cpp "llama2-sys-strip", what it picks for Llama-2-chat's
//            Jinja: "[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]{assistant}</s>"
//   kMistral llama.cpp "llama2" (= its name "mistral"), what it picks for
//            Mistral-7B-Instruct-v0.1/v0.2's Jinja: no <<SYS>> block, the
//            system text is written as "{system}\n" inside the first [INST].
//   the others: the llama.cpp templates of the same name.
enum class ChatTemplate { kLlama2, kLlama3, kChatml, kPhi3, kGemma, kMistral, kZephyr };

// "llama2", "llama3", "chatml", "phi3", "gemma", "mistral", "zephyr".
const char* ChatTemplateName(ChatTemplate t);

// The template called `name` (--chat-template NAME). Error:
// "unknown chat template 'X' (llama2, llama3, chatml, phi3, gemma, mistral, zephyr)".
Result<ChatTemplate> ChatTemplateByName(std::string_view name);

// The built-in template whose format the GGUF's tokenizer.chat_template (a
// Jinja string) writes, recognized by its markers (e.g. "<|start_header_id|>"
// -> llama3, "<|im_start|>" -> chatml, as Qwen uses). nullopt when none
// matches, including Jinja that llama.cpp would render in a format we do not
// have (Phi-4's <|im_sep|>, Mistral v3/v7's [AVAILABLE_TOOLS]/[SYSTEM_PROMPT],
// Llama 4's <|header_start|>, ...): the caller then asks for --chat-template.
std::optional<ChatTemplate> DetectChatTemplate(std::string_view jinja);

// The prompt text for `messages`, ending with the opening of the assistant's
// turn (the generation prompt), byte for byte as llama.cpp writes it with
// add_ass=true, except that the BOS token is never written as text (the
// tokenizer adds BOS as the GGUF says); every other special marker
// ("<|eot_id|>", "</s>", "<start_of_turn>", ...) is text, which the
// tokenizer turns into the special token.
//
// For [INST] templates (llama2, mistral) the assistant's turn opens right
// after " [/INST]", so there is nothing to append; a conversation that ends
// with an assistant message ends with its "</s>", as in llama.cpp.
//
// Errors (one line each): no messages; a role other than system, user or
// assistant; gemma (which has no system role: the system text is prepended
// to the next user turn, as llama.cpp does) with a system message that no
// user message follows, which llama.cpp would silently drop.
Result<std::string> RenderChat(ChatTemplate t, std::span<const ChatMessage> messages);

}  // namespace h2o
