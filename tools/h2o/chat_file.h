// A conversation that `h2o chat` saves (/save FILE) and resumes (/load FILE,
// or --load FILE). FILE is JSON that a person can read and other tools
// take: {"chat_template": NAME, "messages": [{"role", "content"}, ...],
// "kv_tokens": N}, the messages as OpenAI's chat API writes them. Beside it,
// FILE.kv holds the cache's state after those messages (runtime/state_file.h:
// the model's fingerprint, the KV plan, N token ids), so a load goes on
// exactly where the save was, evicted tokens and scores included, without
// feeding anything again; without a state that fits, the conversation is
// fed afresh with the next message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "core/status.h"

namespace h2o::cli {

struct SavedChat {
  std::string chat_template;  // ChatTemplateName
  std::vector<ChatMessage> messages;
  int64_t kv_tokens = 0;  // the tokens FILE.kv holds; 0: it holds none
};

// FILE.kv
std::string ChatStatePath(const std::string& chat_path);

// Writes FILE atomically.
Status WriteChatFile(const std::string& path, const SavedChat& chat);

// Errors (one line, naming the file): unreadable, not JSON, a field of the
// wrong type, a role other than system/user/assistant ("developer" reads as
// system), or messages that do not end with a reply (or hold only system
// messages), from which a chat could not go on with a user's line.
Result<SavedChat> ReadChatFile(const std::string& path);

}  // namespace h2o::cli
