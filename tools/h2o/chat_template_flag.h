// --chat-template for the commands that talk in turns (serve, chat): the
// named built-in template, or the one the GGUF's tokenizer.chat_template is
// recognized as.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "chat/chat_template.h"
#include "core/status.h"
#include "model/model.h"

namespace h2o::cli {

// Adds --chat-template NAME.
void AddChatTemplateFlag(CLI::App& cmd, std::string& name);

// `name` non-empty: that template (an error names the known ones). Empty:
// the model's, or nullopt when it has none we recognize.
Result<std::optional<ChatTemplate>> PickChatTemplate(const std::string& name, const Model& model);

}  // namespace h2o::cli
