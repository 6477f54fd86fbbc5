#include "chat/next_turn.h"

#include <vector>

namespace h2o {
namespace {

// Stands for the reply's content: no whitespace (so no template trims it)
// and bytes no one types in a message.
constexpr std::string_view kReplyMark = "\x1fh2o-reply\x1e";

}  // namespace

Result<std::string> TextAfterReply(ChatTemplate chat, std::span<const ChatMessage> messages) {
  const size_t n = messages.size();
  if (n < 2 || messages[n - 2].role != "assistant" || messages[n - 1].role != "user") {
    return Status::Error("the next turn follows an assistant reply with a user message");
  }
  std::vector<ChatMessage> marked(messages.begin(), messages.end());
  marked[n - 2].content = kReplyMark;
  auto text = RenderChat(chat, marked);
  if (!text.ok()) return text.status();
  // The last mark is the reply's unless the new message carries one too;
  // earlier messages may, as they come before it.
  const size_t at = text->rfind(kReplyMark);
  if (at == std::string::npos || messages[n - 1].content.find(kReplyMark) != std::string::npos) {
    return Status::Error("a message holds the bytes that stand for the reply");
  }
  return text->substr(at + kReplyMark.size());
}

}  // namespace h2o
