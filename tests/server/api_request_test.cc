#include "server/api_request.h"
#include "server/json_fields.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <map>
#include <limits>

namespace h2o::server {
namespace {

CompletionParams Ok(const std::string& body, bool chat = false) {
  CompletionParams p;
  const auto e = ParseCompletionRequest(body, chat, p);
  EXPECT_FALSE(e.has_value()) << body << " -> " << (e ? e->message : "");
  return p;
}

ApiError Err(const std::string& body, bool chat = false) {
  CompletionParams p;
  const auto e = ParseCompletionRequest(body, chat, p);
  EXPECT_TRUE(e.has_value()) << body;
  return e.value_or(ApiError{});
}

TEST(ApiRequest, CompletionFields) {
  const CompletionParams p =
      Ok(R"({"model":"m","prompt":"Hi","max_tokens":7,"temperature":0.5,"top_p":0.9,"top_k":40,)"
         R"("seed":3,"stop":["a","","b"],"stream":true,"stream_options":{"include_usage":true},)"
         R"("logprobs":2,"echo":true,"kv":"h2o:heavy=8,recent=8","n":1,"user":"u"})");
  EXPECT_EQ(p.prompt_text, "Hi");
  EXPECT_FALSE(p.prompt_is_ids);
  EXPECT_EQ(p.max_tokens, 7);
  EXPECT_FLOAT_EQ(p.temperature, 0.5f);
  EXPECT_FLOAT_EQ(p.top_p, 0.9f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_EQ(p.seed, 3u);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(p.stream && p.include_usage && p.logprobs && p.echo);
  EXPECT_EQ(p.top_logprobs, 2);
  EXPECT_EQ(p.kv, "h2o:heavy=8,recent=8");
}

TEST(ApiRequest, PromptAsTokenIds) {
  EXPECT_EQ(Ok(R"({"prompt":[1,403,407]})").prompt_ids, (std::vector<int32_t>{1, 403, 407}));
  EXPECT_EQ(Ok(R"({"prompt":[[1,2]]})").prompt_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(Ok(R"({"prompt":["one"]})").prompt_text, "one");
  EXPECT_EQ(Err(R"({"prompt":[1,-2]})").param, "prompt");
  EXPECT_EQ(Err(R"({"prompt":["a","b"]})").param, "prompt");
  EXPECT_EQ(Err(R"({"prompt":[]})").param, "prompt");
  EXPECT_EQ(Err(R"({"max_tokens":3})").message, "'prompt' is required");
  // OpenAI's shapes nest two levels; anything deeper is not a prompt.
  EXPECT_EQ(Err(R"({"prompt":[[[1]]]})").param, "prompt");
  EXPECT_EQ(Err(R"({"prompt":[["a"]]})").param, "prompt");
  EXPECT_EQ(Err(R"({"prompt":[[]]})").param, "prompt");
  EXPECT_EQ(Err(R"({"prompt":[[1],[2]]})").param, "prompt");
  EXPECT_EQ(Err(R"({"prompt":[1,[2]]})").param, "prompt");
}

// Depth is counted before parsing, brackets inside strings aside, and a
// body deeper than kMaxJsonDepth is refused whatever it holds.
TEST(ApiRequest, NestingDeeperThanTheLimitIsRefusedBeforeParsing) {
  EXPECT_EQ(JsonDepth(R"({"a": [1, {"b": []}]})"), 4u);
  EXPECT_EQ(JsonDepth(R"({"a": "[[[[\"]]]]"})"), 1u);  // inside a string, an escaped quote
  EXPECT_EQ(JsonDepth("[[]][[[]]]"), 3u);
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_EQ(JsonDepth(at_limit), kMaxJsonDepth);
  const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
  const ApiError e = Err(R"({"prompt": )" + deep + "}");
  EXPECT_EQ(e.status, 400);
  EXPECT_NE(e.message.find("100001 deep; at most 64 levels"), std::string::npos) << e.message;
  // Unclosed: refused as deep all the same, without parsing.
  EXPECT_EQ(Err(std::string(70, '{')).status, 400);
  EXPECT_TRUE(Ok(R"({"prompt": "x", "kv_endpoint": true})").kv_endpoint);
  EXPECT_EQ(Err(R"({"prompt": "x", "kv_endpoint": 1})").param, "kv_endpoint");
}

TEST(ApiRequest, ChatMessages) {
  const CompletionParams p = Ok(
      R"({"messages":[{"role":"system","content":"Be brief."},)"
      R"({"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}],)"
      R"("logprobs":true,"top_logprobs":3})",
      true);
  ASSERT_EQ(p.messages.size(), 2u);
  EXPECT_EQ(p.messages[1].content, "Hi there");
  EXPECT_TRUE(p.logprobs);
  EXPECT_EQ(p.top_logprobs, 3);
  EXPECT_EQ(Err(R"({"messages":[]})", true).param, "messages");
  EXPECT_EQ(Err(R"({"messages":[{"content":"x"}]})", true).param, "messages");
  EXPECT_EQ(Err(R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", true).param,
            "messages");
}

TEST(ApiRequest, BadValuesNameTheirField) {
  EXPECT_EQ(Err("{not json").message, "the request body is not valid JSON");
  EXPECT_EQ(Err("[1]").message, "the request body must be a JSON object");
  EXPECT_EQ(Err(R"({"prompt":"x","max_tokens":-1})").param, "max_tokens");
  EXPECT_EQ(Err(R"({"prompt":"x","max_tokens":"7"})").message, "'max_tokens' must be an integer");
  EXPECT_EQ(Err(R"({"prompt":"x","temperature":3})").param, "temperature");
  EXPECT_EQ(Err(R"({"prompt":"x","top_p":0})").param, "top_p");
  EXPECT_EQ(Err(R"({"prompt":"x","n":2})").message, "only n = 1 is supported");
  EXPECT_EQ(Err(R"({"prompt":"x","stop":["a","b","c","d","e"]})").param, "stop");
  EXPECT_EQ(Err(R"({"prompt":"x","stop":3})").param, "stop");
  EXPECT_EQ(Err(R"({"prompt":"x","stream":"yes"})").param, "stream");
  EXPECT_EQ(Err(R"({"prompt":"x","logprobs":6})").param, "logprobs");
  EXPECT_EQ(Err(R"({"prompt":"x","kv":5})").param, "kv");
  const ApiError e = Err(R"({"prompt":"x","max_tokens":0})");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.type, "invalid_request_error");
}

TEST(ApiRequest, ErrorBodyIsOpenAisShape) {
  const auto j =
      nlohmann::json::parse(ErrorBody({400, "bad", "invalid_request_error", "stop", ""}));
  EXPECT_EQ(j["error"]["message"], "bad");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "stop");
  EXPECT_TRUE(j["error"]["code"].is_null());
}

// llama-server's sampling fields are read, in both of logit_bias's shapes.
TEST(ApiRequest, SamplingFields) {
  const CompletionParams p = Ok(
      R"({"prompt":"Hi","min_p":0.05,"typical_p":0.9,"repeat_penalty":1.1,"repeat_last_n":32,)"
      R"("frequency_penalty":0.5,"presence_penalty":-0.5,"logit_bias":{"15":2,"7":false},)"
      R"("n_predict":9})");
  EXPECT_FLOAT_EQ(p.min_p, 0.05f);
  EXPECT_FLOAT_EQ(p.typical_p, 0.9f);
  EXPECT_FLOAT_EQ(p.repeat_penalty, 1.1f);
  EXPECT_EQ(p.repeat_last_n, 32);
  EXPECT_FLOAT_EQ(p.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(p.presence_penalty, -0.5f);
  ASSERT_EQ(p.logit_bias.size(), 2u);
  EXPECT_EQ(p.max_tokens, 9);
  std::map<int32_t, float> bias(p.logit_bias.begin(), p.logit_bias.end());
  EXPECT_EQ(bias[15], 2.0f);
  EXPECT_EQ(bias[7], -std::numeric_limits<float>::infinity());
  const CompletionParams q = Ok(R"({"prompt":"Hi","logit_bias":[[3,-1.5]],"n_predict":-1,"max_tokens":4})");
  ASSERT_EQ(q.logit_bias.size(), 1u);
  EXPECT_EQ(q.logit_bias[0], (std::pair<int32_t, float>{3, -1.5f}));
  EXPECT_EQ(q.max_tokens, 4);  // max_tokens wins over n_predict
  EXPECT_FALSE(Ok(R"({"prompt":"Hi","n_predict":-1})").max_tokens.has_value());
  const CompletionParams developer = Ok(
      R"({"messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":"Hi"}]})",
      true);
  EXPECT_EQ(developer.messages[0].role, "system");
}

// A field we do not implement is refused by name; one that asks for
// nothing passes.
TEST(ApiRequest, UnimplementedFieldsAre400sNamingThem) {
  const std::pair<const char*, const char*> refused[] = {
      {R"({"prompt":"Hi","tools":[{"type":"function"}]})", "tools"},
      {R"({"prompt":"Hi","response_format":{"type":"xml"}})", "response_format"},
      {R"({"prompt":"Hi","response_format":{"type":"json_schema"}})", "response_format"},
      {R"({"prompt":"Hi","grammar":"root ::= x"})", "grammar"},
      {R"({"prompt":"Hi","grammar":3})", "grammar"},
      {R"({"prompt":"Hi","json_schema":{"type":"string","pattern":"a+"}})", "json_schema"},
      {R"({"prompt":"Hi","grammar":"root ::= \"a\"","json_schema":{}})", "json_schema"},
      {R"({"prompt":"Hi","mirostat":2})", "mirostat"},
      {R"({"prompt":"Hi","logit_bias":{"x":1}})", "logit_bias"},
      {R"({"prompt":"Hi","logit_bias":{"3":300}})", "logit_bias"},
      {R"({"prompt":"Hi","frequency_penalty":3})", "frequency_penalty"},
      {R"({"prompt":"Hi","typical_p":2})", "typical_p"},
      {R"({"prompt":"Hi","repeat_penalty":0})", "repeat_penalty"},
      {R"({"prompt":"Hi","n_predict":0})", "n_predict"},
  };
  for (const auto& [body, param] : refused) {
    const ApiError e = Err(body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_EQ(e.param, param) << body;
  }
  const CompletionParams nothing =
      Ok(R"({"prompt":"Hi","tools":[],"tool_choice":"none","response_format":{"type":"text"},)"
         R"("mirostat":0,"grammar":""})");
  EXPECT_EQ(nothing.grammar, nullptr);
}

// Each way of asking for structured output gives the request a grammar.
TEST(ApiRequest, StructuredOutputFieldsGiveAGrammar) {
  for (const char* body : {
           R"({"prompt":"Hi","grammar":"root ::= \"yes\" | \"no\""})",
           R"({"prompt":"Hi","json_schema":{"type":"integer"}})",
           R"({"prompt":"Hi","response_format":{"type":"json_object"}})",
           R"({"prompt":"Hi","response_format":{"type":"json_object","schema":{"type":"object"}}})",
           R"({"prompt":"Hi","response_format":{"type":"json_schema",)"
           R"("json_schema":{"name":"n","strict":true,"schema":{"enum":[1,2]}}}})",
       }) {
    EXPECT_NE(Ok(body).grammar, nullptr) << body;
  }
  const ApiError both = Err(R"({"prompt":"Hi","grammar":"root ::= \"a\"","json_schema":{}})");
  EXPECT_EQ(both.message, "'grammar' and 'json_schema' both constrain the output: give one");
}

}  // namespace
}  // namespace h2o::server
