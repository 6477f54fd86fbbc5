// The chat-template matcher and renderer: a GGUF's Jinja text (untrusted,
// from the model file) and a request's messages (untrusted, from a client).
// A recognized template's name must map back to the same template.
//
// Input: fields split on 0x1E: a template name, a Jinja text, then messages
// as "ROLE\x1FCONTENT".

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "fuzz/fields.h"

namespace {

constexpr h2o::ChatTemplate kAll[] = {
    h2o::ChatTemplate::kLlama2, h2o::ChatTemplate::kLlama3,  h2o::ChatTemplate::kChatml,
    h2o::ChatTemplate::kPhi3,   h2o::ChatTemplate::kGemma,   h2o::ChatTemplate::kMistral,
    h2o::ChatTemplate::kZephyr};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto fields =
      h2o::fuzz::SplitFields({reinterpret_cast<const char*>(data), size}, '\x1e');
  (void)h2o::ChatTemplateByName(fields[0]);
  const std::string_view jinja = fields.size() > 1 ? fields[1] : "";
  std::vector<h2o::ChatMessage> messages;
  for (size_t i = 2; i < fields.size(); ++i) {
    const auto parts = h2o::fuzz::SplitFields(fields[i], '\x1f');
    messages.push_back({std::string(parts[0]), std::string(parts.size() > 1 ? parts[1] : "")});
  }
  for (h2o::ChatTemplate t : kAll) (void)h2o::RenderChat(t, messages);

  const auto detected = h2o::DetectChatTemplate(jinja);
  if (detected) {
    auto by_name = h2o::ChatTemplateByName(h2o::ChatTemplateName(*detected));
    if (!by_name.ok() || by_name.value() != *detected) std::abort();
  }
  return 0;
}
