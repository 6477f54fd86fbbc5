// A conversation carried by tokens: after a reply, the cache holds the
// reply's tokens exactly as they were sampled, which the template would
// write otherwise (trimmed, or cut by a token limit before its end). So
// the next turn is not found by re-rendering the whole conversation and
// matching it against the cache's text (a trimmed reply breaks the match
// and the history is fed again); it is what the template writes after the
// reply's content: its end-of-turn, the new user message and the opening
// of the next reply. Pure and thread-safe.
#pragma once

#include <span>
#include <string>

#include "chat/chat_template.h"
#include "core/status.h"

namespace h2o {

// `messages` ends with an assistant reply and then a user message. Returns
// the text the template writes after that reply's content through the
// generation prompt, so that (the prompt that led to the reply) + (the
// reply) + this is the template's rendering of `messages` whenever the
// template leaves the reply as it is. Errors: the last two messages are
// not an assistant reply and a user message; the template cannot render
// them.
Result<std::string> TextAfterReply(ChatTemplate chat, std::span<const ChatMessage> messages);

}  // namespace h2o
