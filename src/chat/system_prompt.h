// How many of a chat prompt's tokens are its system prompt: what n_keep -1
// (and `h2o chat --kv-keep -1`) pins, so the instructions a conversation
// begins with are never evicted.
#pragma once

#include <cstdint>
#include <span>

#include "chat/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

// The tokens the rendered prompt of `messages` shares from its start with
// its leading system message rendered alone: the template's first segment
// (through the system text and what closes it; with some templates the
// next segment's opening token too). 0 when the first message is not a
// system message or a template cannot render it.
int64_t SystemPromptTokens(ChatTemplate chat, std::span<const ChatMessage> messages,
                           const Tokenizer& tokenizer);

}  // namespace h2o
