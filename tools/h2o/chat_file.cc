#include "chat_file.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.h"

namespace h2o::cli {
namespace {

using nlohmann::json;

Status Bad(const std::string& path, const std::string& why) {
  return Status::Error(fmt::format("{}: {}", path, why));
}

}  // namespace

std::string ChatStatePath(const std::string& chat_path) { return chat_path + ".kv"; }

Status WriteChatFile(const std::string& path, const SavedChat& chat) {
  json messages = json::array();
  for (const ChatMessage& m : chat.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  const json file = {{"chat_template", chat.chat_template},
                     {"messages", std::move(messages)},
                     {"kv_tokens", chat.kv_tokens}};
  // A reply may end inside a UTF-8 character (cut by -n or Ctrl-C): such
  // bytes are written as U+FFFD rather than refused.
  return WriteFileAtomically(path, file.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

Result<SavedChat> ReadChatFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Bad(path, "cannot open it");
  std::stringstream text;
  text << in.rdbuf();
  const json file = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (file.is_discarded() || !file.is_object()) return Bad(path, "not a JSON object");
  SavedChat chat;
  if (file.contains("chat_template")) {
    if (!file["chat_template"].is_string()) return Bad(path, "'chat_template' must be a string");
    chat.chat_template = file["chat_template"].get<std::string>();
  }
  if (file.contains("kv_tokens")) {
    if (!file["kv_tokens"].is_number_integer() || file["kv_tokens"].get<int64_t>() < 0) {
      return Bad(path, "'kv_tokens' must be a whole number, 0 or more");
    }
    chat.kv_tokens = file["kv_tokens"].get<int64_t>();
  }
  if (!file.contains("messages") || !file["messages"].is_array()) {
    return Bad(path, "'messages' must be an array");
  }
  for (const json& m : file["messages"]) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string()) {
      return Bad(path, "each message needs a string 'role' and a string 'content'");
    }
    ChatMessage message{m["role"].get<std::string>(), m["content"].get<std::string>()};
    if (message.role == "developer") message.role = "system";  // OpenAI's newer name
    if (message.role != "system" && message.role != "user" && message.role != "assistant") {
      return Bad(path, fmt::format("unknown role '{}' (system, user, assistant)", message.role));
    }
    chat.messages.push_back(std::move(message));
  }
  bool only_system = true;
  for (const ChatMessage& m : chat.messages) only_system = only_system && m.role == "system";
  if (!only_system && chat.messages.back().role != "assistant") {
    return Bad(path, "the conversation must end with an assistant reply");
  }
  return chat;
}

}  // namespace h2o::cli
