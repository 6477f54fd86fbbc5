#include "chat/system_prompt.h"

#include <algorithm>
#include <vector>

namespace h2o {

int64_t SystemPromptTokens(ChatTemplate chat, std::span<const ChatMessage> messages,
                           const Tokenizer& tokenizer) {
  if (messages.empty() || messages.front().role != "system") return 0;
  auto whole = RenderChat(chat, messages);
  auto alone = RenderChat(chat, messages.first(1));
  if (!whole.ok() || !alone.ok()) return 0;
  const std::vector<int32_t> a = tokenizer.Encode(*whole, /*add_special=*/true);
  const std::vector<int32_t> b = tokenizer.Encode(*alone, /*add_special=*/true);
  const auto [end, unused] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return end - a.begin();
}

}  // namespace h2o
