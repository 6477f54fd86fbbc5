// Chat templates: every format against hand-written expected prompts (from
// llama.cpp's format rules, minus the BOS text), detection against the Jinja
// of popular GGUFs, the errors, and a rendered Llama 3 prompt through the
// real Llama 3 tokenizer.
#include "chat/chat_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "You are helpful."},
    {"user", "Hi there"},
    {"assistant", "Hello! How can I help?"},
    {"user", "What is 2+2?"},
};
const std::vector<ChatMessage> kUserOnly = {{"user", "Hi there"}};

std::string Render(ChatTemplate t, const std::vector<ChatMessage>& messages) {
  Result<std::string> prompt = RenderChat(t, messages);
  EXPECT_TRUE(prompt.ok()) << prompt.status().message();
  return prompt.ok() ? prompt.value() : std::string();
}

// ---- Rendering -----------------------------------------------------------

TEST(RenderChatTest, Llama2) {
  EXPECT_EQ(Render(ChatTemplate::kLlama2, kConversation),
            "[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHi there [/INST]"
            "Hello! How can I help?</s>"
            "[INST] What is 2+2? [/INST]");
  EXPECT_EQ(Render(ChatTemplate::kLlama2, kUserOnly), "[INST] Hi there [/INST]");
}

TEST(RenderChatTest, Llama3) {
  EXPECT_EQ(Render(ChatTemplate::kLlama3, kConversation),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello! How can I help?<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(Render(ChatTemplate::kLlama3, kUserOnly),
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(RenderChatTest, Chatml) {
  EXPECT_EQ(Render(ChatTemplate::kChatml, kConversation),
            "<|im_start|>system\nYou are helpful.<|im_end|>\n"
            "<|im_start|>user\nHi there<|im_end|>\n"
            "<|im_start|>assistant\nHello! How can I help?<|im_end|>\n"
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(Render(ChatTemplate::kChatml, kUserOnly),
            "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n");
}

TEST(RenderChatTest, Phi3) {
  EXPECT_EQ(Render(ChatTemplate::kPhi3, kConversation),
            "<|system|>\nYou are helpful.<|end|>\n"
            "<|user|>\nHi there<|end|>\n"
            "<|assistant|>\nHello! How can I help?<|end|>\n"
            "<|user|>\nWhat is 2+2?<|end|>\n"
            "<|assistant|>\n");
  EXPECT_EQ(Render(ChatTemplate::kPhi3, kUserOnly), "<|user|>\nHi there<|end|>\n<|assistant|>\n");
}

TEST(RenderChatTest, GemmaFoldsTheSystemTextIntoTheFirstUserTurn) {
  EXPECT_EQ(Render(ChatTemplate::kGemma, kConversation),
            "<start_of_turn>user\nYou are helpful.\n\nHi there<end_of_turn>\n"
            "<start_of_turn>model\nHello! How can I help?<end_of_turn>\n"
            "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
            "<start_of_turn>model\n");
  EXPECT_EQ(Render(ChatTemplate::kGemma, kUserOnly),
            "<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n");
}

TEST(RenderChatTest, MistralWritesTheSystemTextAsALineOfTheFirstInstruction) {
  EXPECT_EQ(Render(ChatTemplate::kMistral, kConversation),
            "[INST] You are helpful.\nHi there [/INST]"
            "Hello! How can I help?</s>"
            "[INST] What is 2+2? [/INST]");
  EXPECT_EQ(Render(ChatTemplate::kMistral, kUserOnly), "[INST] Hi there [/INST]");
}

TEST(RenderChatTest, Zephyr) {
  EXPECT_EQ(Render(ChatTemplate::kZephyr, kConversation),
            "<|system|>\nYou are helpful.<|endoftext|>\n"
            "<|user|>\nHi there<|endoftext|>\n"
            "<|assistant|>\nHello! How can I help?<|endoftext|>\n"
            "<|user|>\nWhat is 2+2?<|endoftext|>\n"
            "<|assistant|>\n");
  EXPECT_EQ(Render(ChatTemplate::kZephyr, kUserOnly),
            "<|user|>\nHi there<|endoftext|>\n<|assistant|>\n");
}

// llama3, gemma and llama2 trim each message (llama.cpp's trim() / Jinja's
// | trim and .strip()); chatml, phi3, zephyr and mistral keep it as sent.
TEST(RenderChatTest, TrimsContentOnlyWhereTheFormatDoes) {
  const std::vector<ChatMessage> spaced = {{"user", " \t Hi there \n"}};
  EXPECT_EQ(Render(ChatTemplate::kLlama3, spaced),
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(Render(ChatTemplate::kGemma, spaced),
            "<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n");
  EXPECT_EQ(Render(ChatTemplate::kLlama2, spaced), "[INST] Hi there [/INST]");
  EXPECT_EQ(Render(ChatTemplate::kMistral, spaced), "[INST]  \t Hi there \n [/INST]");
  EXPECT_EQ(Render(ChatTemplate::kChatml, spaced),
            "<|im_start|>user\n \t Hi there \n<|im_end|>\n<|im_start|>assistant\n");
}

TEST(RenderChatTest, GemmaCarriesTheSystemTextPastAModelTurn) {
  const std::vector<ChatMessage> messages = {
      {"assistant", "Welcome."}, {"system", " Be brief. "}, {"user", "Hi"}};
  EXPECT_EQ(Render(ChatTemplate::kGemma, messages),
            "<start_of_turn>model\nWelcome.<end_of_turn>\n"
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
            "<start_of_turn>model\n");
}

TEST(RenderChatTest, InstTemplatesEndWithTheReplyWhenTheAssistantSpokeLast) {
  const std::vector<ChatMessage> messages = {{"user", "Hi"}, {"assistant", "Hello"}};
  EXPECT_EQ(Render(ChatTemplate::kMistral, messages), "[INST] Hi [/INST]Hello</s>");
}

// ---- Names ---------------------------------------------------------------

TEST(ChatTemplateNameTest, EveryNameRoundTrips) {
  for (ChatTemplate t :
       {ChatTemplate::kLlama2, ChatTemplate::kLlama3, ChatTemplate::kChatml, ChatTemplate::kPhi3,
        ChatTemplate::kGemma, ChatTemplate::kMistral, ChatTemplate::kZephyr}) {
    Result<ChatTemplate> back = ChatTemplateByName(ChatTemplateName(t));
    ASSERT_TRUE(back.ok()) << ChatTemplateName(t);
    EXPECT_EQ(back.value(), t);
  }
  EXPECT_STREQ(ChatTemplateName(ChatTemplate::kLlama3), "llama3");
  EXPECT_STREQ(ChatTemplateName(ChatTemplate::kMistral), "mistral");
}

// ---- Errors --------------------------------------------------------------

TEST(ChatTemplateErrorTest, UnknownName) {
  Result<ChatTemplate> t = ChatTemplateByName("vicuna");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(
      t.status().message(),
      "unknown chat template 'vicuna' (llama2, llama3, chatml, phi3, gemma, mistral, zephyr)");
}

TEST(ChatTemplateErrorTest, NoMessages) {
  for (ChatTemplate t : {ChatTemplate::kChatml, ChatTemplate::kLlama2}) {
    Result<std::string> prompt = RenderChat(t, std::span<const ChatMessage>());
    ASSERT_FALSE(prompt.ok());
    EXPECT_EQ(prompt.status().message(), "chat has no messages");
  }
}

TEST(ChatTemplateErrorTest, UnknownRole) {
  const std::vector<ChatMessage> messages = {{"user", "Hi"}, {"tool", "{}"}};
  for (ChatTemplate t : {ChatTemplate::kLlama3, ChatTemplate::kMistral}) {
    Result<std::string> prompt = RenderChat(t, messages);
    ASSERT_FALSE(prompt.ok());
    EXPECT_EQ(prompt.status().message(),
              "messages[1]: unknown role 'tool' (system, user, assistant)");
  }
}

TEST(ChatTemplateErrorTest, GemmaSystemMessageWithNoUserAfterIt) {
  const std::vector<ChatMessage> messages = {{"user", "Hi"}, {"system", "Be brief."}};
  Result<std::string> prompt = RenderChat(ChatTemplate::kGemma, messages);
  ASSERT_FALSE(prompt.ok());
  EXPECT_EQ(prompt.status().message(),
            "gemma has no system role and no user message follows the system message to "
            "carry its text");
}

// ---- Detection -----------------------------------------------------------
// Excerpts of tokenizer.chat_template as stored in the GGUFs (the Jinja's
// own "\n" escapes are the two characters backslash, n).

constexpr const char* kLlama31Jinja = R"JINJA({{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{#- System message + builtin tools #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if builtin_tools is defined or tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{{- system_message }}
{{- "<|eot_id|>" }}
{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {{- '<|python_tag|>' + tool_call.name + '.call(' }}
        {{- "<|eom_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
)JINJA";

constexpr const char* kQwen25Jinja = R"JINJA({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)JINJA";

constexpr const char* kPhi35MiniJinja =
    R"JINJA({% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %})JINJA";

constexpr const char* kGemma3Jinja = R"JINJA({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\n'}}
{%- endif -%}
)JINJA";

constexpr const char* kMistral7bV02Jinja =
    R"JINJA({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})JINJA";

constexpr const char* kLlama2ChatJinja =
    R"JINJA({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})JINJA";

constexpr const char* kZephyr7bBetaJinja = R"JINJA({% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>\n' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>\n' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>\n'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %})JINJA";

TEST(DetectChatTemplateTest, PopularGgufs) {
  EXPECT_EQ(DetectChatTemplate(kLlama31Jinja), ChatTemplate::kLlama3);
  EXPECT_EQ(DetectChatTemplate(kQwen25Jinja), ChatTemplate::kChatml);
  EXPECT_EQ(DetectChatTemplate(kPhi35MiniJinja), ChatTemplate::kPhi3);
  EXPECT_EQ(DetectChatTemplate(kGemma3Jinja), ChatTemplate::kGemma);
  EXPECT_EQ(DetectChatTemplate(kMistral7bV02Jinja), ChatTemplate::kMistral);
  EXPECT_EQ(DetectChatTemplate(kLlama2ChatJinja), ChatTemplate::kLlama2);
  EXPECT_EQ(DetectChatTemplate(kZephyr7bBetaJinja), ChatTemplate::kZephyr);
}

TEST(DetectChatTemplateTest, ShortFormsOfTheSameFamilies) {
  // Llama 3.0 and the vocab-only test GGUF: no tools, one line.
  EXPECT_EQ(DetectChatTemplate("{% for message in messages %}{{ '<|start_header_id|>' + "
                               "message['role'] + '<|end_header_id|>\\n\\n' }}{% endfor %}"),
            ChatTemplate::kLlama3);
  // StableLM 2 Zephyr spells the role marker from the role name.
  EXPECT_EQ(DetectChatTemplate("{% for message in messages %}{{'<|' + message['role'] + '|>' + "
                               "'\\n' + message['content'] + '<|endoftext|>' + '\\n'}}"
                               "{% endfor %}"),
            ChatTemplate::kZephyr);
  // Phi-3-mini spells its markers the same way but ends turns with <|end|>.
  EXPECT_EQ(DetectChatTemplate("{{'<|' + message['role'] + '|>' + '\\n' + message['content'] + "
                               "'<|end|>\\n' }}{{ '<|assistant|>\\n' }}"),
            ChatTemplate::kPhi3);
  // A template's name stored in place of Jinja.
  EXPECT_EQ(DetectChatTemplate("gemma"), ChatTemplate::kGemma);
}

TEST(DetectChatTemplateTest, FormatsWeDoNotRenderAreNotGuessed) {
  // Phi-4: chatml markers with <|im_sep|> between role and content.
  EXPECT_EQ(DetectChatTemplate("{{'<|im_start|>' + message['role'] + '<|im_sep|>'}}"),
            std::nullopt);
  // Mistral v7 and v3.
  EXPECT_EQ(DetectChatTemplate("{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}"
                               "{{- '[INST]' + message['content'] + '[/INST]' }}"),
            std::nullopt);
  EXPECT_EQ(DetectChatTemplate("{{- '[AVAILABLE_TOOLS] [' }}{{- '[INST] ' + message['content'] }}"),
            std::nullopt);
  // Falcon 3: Zephyr's role markers, turns closed by a newline.
  EXPECT_EQ(DetectChatTemplate("{{ '<|user|>\\n' + message['content'] + '\\n' }}"
                               "{{ '<|assistant|>\\n' + message['content'] + eos_token }}"),
            std::nullopt);
  // Llama 4.
  EXPECT_EQ(
      DetectChatTemplate("{{- '<|header_start|>' + message['role'] + '<|header_end|>\\n\\n' }}"),
      std::nullopt);
}

TEST(DetectChatTemplateTest, UnrelatedTextIsNotATemplate) {
  EXPECT_EQ(DetectChatTemplate(""), std::nullopt);
  EXPECT_EQ(DetectChatTemplate("{% for message in messages %}{{ message['content'] }}{% endfor %}"),
            std::nullopt);
  EXPECT_EQ(DetectChatTemplate("The quick brown fox jumps over the lazy dog."), std::nullopt);
}

// ---- Through the real Llama 3 tokenizer ------------------------------------

class Llama3ChatTokensTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto file = gguf::File::Open(std::string(H2O_TEST_DATA_DIR) + "/tokenizers/llama3-vocab.gguf");
    if (file.ok()) {
      file_ = std::move(file).value().release();
    } else {
      open_error_ = file.status().message();
    }
  }
  static void TearDownTestSuite() {
    delete file_;
    file_ = nullptr;
  }
  static const gguf::File* file_;
  static std::string open_error_;
};

const gguf::File* Llama3ChatTokensTest::file_ = nullptr;
std::string Llama3ChatTokensTest::open_error_;

TEST_F(Llama3ChatTokensTest, TheGgufsOwnTemplateIsDetectedAsLlama3) {
  ASSERT_NE(file_, nullptr) << open_error_;
  Result<std::string> jinja = file_->GetString("tokenizer.chat_template");
  ASSERT_TRUE(jinja.ok()) << jinja.status().message();
  EXPECT_EQ(DetectChatTemplate(jinja.value()), ChatTemplate::kLlama3);
}

// Each marker the template writes as text must become its one special
// token, and the rest must tokenize as it would on its own.
TEST_F(Llama3ChatTokensTest, HeaderMarkersBecomeSingleSpecialTokens) {
  ASSERT_NE(file_, nullptr) << open_error_;
  Result<Tokenizer> tokenizer = LoadTokenizerFromGguf(*file_);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  const std::vector<std::string>& tokens = tokenizer->vocab().tokens;
  auto id_of = [&](const std::string& piece) {
    const auto it = std::find(tokens.begin(), tokens.end(), piece);
    EXPECT_NE(it, tokens.end()) << piece;
    return static_cast<int32_t>(it - tokens.begin());
  };
  const int32_t start_header = id_of("<|start_header_id|>");
  const int32_t end_header = id_of("<|end_header_id|>");
  const int32_t eot = id_of("<|eot_id|>");
  EXPECT_EQ(start_header, 128006);
  EXPECT_EQ(end_header, 128007);
  EXPECT_EQ(eot, 128009);

  const std::vector<ChatMessage> messages = {{"system", "You are helpful."}, {"user", "Hi there"}};
  const std::string prompt = Render(ChatTemplate::kLlama3, messages);
  const std::vector<int32_t> ids = tokenizer->Encode(prompt, /*add_special=*/true);

  std::vector<int32_t> expected = {tokenizer->vocab().bos_id};
  auto append_text = [&](const std::string& text) {
    for (int32_t id : tokenizer->Encode(text, /*add_special=*/false)) expected.push_back(id);
  };
  for (const char* role : {"system", "user", "assistant"}) {
    expected.push_back(start_header);
    append_text(role);
    expected.push_back(end_header);
    append_text("\n\n");
    if (std::string(role) == "system") append_text("You are helpful.");
    if (std::string(role) == "user") append_text("Hi there");
    if (std::string(role) != "assistant") expected.push_back(eot);
  }
  EXPECT_EQ(ids, expected) << prompt;
  EXPECT_EQ(ids.front(), 128000);  // BOS once, from the tokenizer, not from the text
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 128000), 1);
}

}  // namespace
}  // namespace h2o
