#include "chat_template_flag.h"

namespace h2o::cli {

void AddChatTemplateFlag(CLI::App& cmd, std::string& name) {
  cmd.add_option("--chat-template", name,
                 "llama2, llama3, chatml, phi3, gemma, mistral or zephyr (default: recognized "
                 "from the GGUF)");
}

Result<std::optional<ChatTemplate>> PickChatTemplate(const std::string& name, const Model& model) {
  if (!name.empty()) {
    auto named = ChatTemplateByName(name);
    if (!named.ok()) return named.status().WithContext("--chat-template");
    return std::optional<ChatTemplate>(*named);
  }
  auto jinja = model.file().GetString("tokenizer.chat_template");
  if (!jinja.ok()) return std::optional<ChatTemplate>();
  return DetectChatTemplate(*jinja);
}

}  // namespace h2o::cli
