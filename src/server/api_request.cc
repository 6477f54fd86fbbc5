#include "server/api_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "grammar/json_schema.h"
#include "server/json_fields.h"

namespace h2o::server {
namespace {

using nlohmann::json;

// Token ids, or an error naming `what`.
std::optional<ApiError> ReadIds(const json& list, CompletionParams& out) {
  out.prompt_ids.reserve(list.size());
  for (const json& id : list) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Bad("prompt",
                 "'prompt' must be a string or an array of token ids (non-negative integers)");
    }
    out.prompt_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  out.prompt_is_ids = true;
  return std::nullopt;
}

// One prompt, in one of OpenAI's shapes: "text", ["text"], [ids...] or
// [[ids...]]. A list of several prompts (a batch) is not supported, and
// nothing nests deeper: read by looking at most two levels down.
std::optional<ApiError> ReadPrompt(const json& j, CompletionParams& out) {
  if (!j.contains("prompt")) return Bad("prompt", "'prompt' is required");
  const json& p = j["prompt"];
  if (p.is_string()) {
    out.prompt_text = p.get<std::string>();
    return std::nullopt;
  }
  if (!p.is_array() || p.empty()) {
    return Bad("prompt", "'prompt' must be a string or an array of token ids");
  }
  const json& first = p[0];
  if (!first.is_array() && !first.is_string()) return ReadIds(p, out);
  if (p.size() != 1) {
    return Bad("prompt", "'prompt' holds one prompt: a list of several is not supported");
  }
  if (first.is_string()) {
    out.prompt_text = first.get<std::string>();
    return std::nullopt;
  }
  if (first.empty()) return Bad("prompt", "'prompt' must be a string or an array of token ids");
  return ReadIds(first, out);
}

std::optional<ApiError> ReadMessages(const json& j, CompletionParams& out) {
  if (!j.contains("messages")) return Bad("messages", "'messages' is required");
  const json& m = j["messages"];
  if (!m.is_array() || m.empty()) return Bad("messages", "'messages' must be a non-empty array");
  for (const json& message : m) {
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
      return Bad("messages", "each message needs a string 'role'");
    }
    ChatMessage cm;
    cm.role = message["role"].get<std::string>();
    if (cm.role == "developer") cm.role = "system";  // OpenAI's newer name for it
    const json content = message.value("content", json());
    if (content.is_string()) {
      cm.content = content.get<std::string>();
    } else if (content.is_array()) {
      // Content parts: the text ones, joined.
      for (const json& part : content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string()) {
          return Bad("messages", "only text content parts are supported");
        }
        cm.content += part["text"].get<std::string>();
      }
    } else if (!content.is_null()) {
      return Bad("messages", "a message's 'content' must be a string or an array of text parts");
    }
    out.messages.push_back(std::move(cm));
  }
  return std::nullopt;
}

std::optional<ApiError> ReadStop(const json& j, CompletionParams& out) {
  if (!j.contains("stop") || j["stop"].is_null()) return std::nullopt;
  const json& s = j["stop"];
  std::vector<json> items;
  if (s.is_string()) {
    items.push_back(s);
  } else if (s.is_array()) {
    items.assign(s.begin(), s.end());
  } else {
    return Bad("stop", "'stop' must be a string or an array of strings");
  }
  if (items.size() > 4) return Bad("stop", "'stop' takes at most 4 strings");
  for (const json& item : items) {
    if (!item.is_string()) return Bad("stop", "'stop' must be a string or an array of strings");
    if (!item.get<std::string>().empty()) out.stop.push_back(item.get<std::string>());
  }
  return std::nullopt;
}

// {"id": bias} (OpenAI) or [[id, bias], ...] (llama-server); a bias of
// false bans the token.
std::optional<ApiError> ReadLogitBias(const json& j, CompletionParams& out) {
  if (!j.contains("logit_bias") || j["logit_bias"].is_null()) return std::nullopt;
  const json& b = j["logit_bias"];
  const auto add = [&](int64_t id, const json& bias) -> std::optional<ApiError> {
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
      return Bad("logit_bias", "'logit_bias' keys must be token ids");
    }
    if (bias.is_boolean() && !bias.get<bool>()) {
      out.logit_bias.emplace_back(static_cast<int32_t>(id), -std::numeric_limits<float>::infinity());
      return std::nullopt;
    }
    if (!bias.is_number() || bias.get<double>() < -100.0 || bias.get<double>() > 100.0) {
      return Bad("logit_bias", "a 'logit_bias' value must be a number from -100 to 100, or false");
    }
    out.logit_bias.emplace_back(static_cast<int32_t>(id), bias.get<float>());
    return std::nullopt;
  };
  if (b.is_object()) {
    for (const auto& [key, bias] : b.items()) {
      int64_t id = -1;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (ec != std::errc() || end != key.data() + key.size()) id = -1;
      if (auto e = add(id, bias)) return e;
    }
    return std::nullopt;
  }
  if (b.is_array()) {
    for (const json& pair : b) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer()) {
        return Bad("logit_bias", "'logit_bias' as an array holds [token id, bias] pairs");
      }
      if (auto e = add(pair[0].get<int64_t>(), pair[1])) return e;
    }
    return std::nullopt;
  }
  return Bad("logit_bias", "'logit_bias' must map token ids to biases");
}

std::optional<ApiError> ReadSampling(const json& j, CompletionParams& out) {
  if (auto e = ReadNumber(j, "min_p", 0.0, 1.0, out.min_p)) return e;
  if (auto e = ReadNumber(j, "typical_p", 0.0, 1.0, out.typical_p)) return e;
  if (auto e = ReadNumber(j, "repeat_penalty", 0.0, 100.0, out.repeat_penalty)) return e;
  if (j.contains("repeat_penalty") && j["repeat_penalty"].is_number() && out.repeat_penalty <= 0.0f) {
    return Bad("repeat_penalty", "'repeat_penalty' must be greater than 0 (1: off)");
  }
  std::optional<int64_t> n;
  if (auto e = ReadInt(j, "repeat_last_n", 0, std::numeric_limits<int32_t>::max(), n)) return e;
  if (n) out.repeat_last_n = static_cast<int32_t>(*n);
  if (auto e = ReadNumber(j, "frequency_penalty", -2.0, 2.0, out.frequency_penalty)) return e;
  if (auto e = ReadNumber(j, "presence_penalty", -2.0, 2.0, out.presence_penalty)) return e;
  return ReadLogitBias(j, out);
}

// The output's grammar from whichever one field asks for it: "grammar"
// (GBNF text), "json_schema" (a schema), or "response_format" ({"type":
// "json_object"}, optionally with a "schema", or {"type": "json_schema",
// "json_schema": {"schema": ...}}). "text", "" and null ask for nothing.
std::optional<ApiError> ReadGrammar(const json& j, CompletionParams& out) {
  std::string gbnf, from;
  auto take = [&](const char* field, Result<std::string> text) -> std::optional<ApiError> {
    if (!text.ok()) return Bad(field, text.status().message());
    if (!from.empty()) {
      return Bad(field,
                 fmt::format("'{}' and '{}' both constrain the output: give one", from, field));
    }
    from = field;
    gbnf = std::move(text).value();
    return std::nullopt;
  };
  if (j.contains("grammar") && !j["grammar"].is_null() && j["grammar"] != "") {
    if (!j["grammar"].is_string()) return Bad("grammar", "'grammar' must be a GBNF string");
    if (auto e = take("grammar", j["grammar"].get<std::string>())) return e;
  }
  if (j.contains("json_schema") && !j["json_schema"].is_null()) {
    if (auto e = take("json_schema", JsonSchemaToGbnf(j["json_schema"]))) return e;
  }
  if (j.contains("response_format") && !j["response_format"].is_null()) {
    const json& f = j["response_format"];
    const std::string type = f.is_object() ? f.value("type", "") : "";
    if (type == "json_object") {
      const auto text = f.contains("schema") ? JsonSchemaToGbnf(f["schema"])
                                             : Result<std::string>(JsonObjectGbnf());
      if (auto e = take("response_format", text)) return e;
    } else if (type == "json_schema") {
      if (!f.contains("json_schema") || !f["json_schema"].is_object() ||
          !f["json_schema"].contains("schema")) {
        return Bad("response_format",
                   "'response_format' of type json_schema needs 'json_schema': {'schema': ...}");
      }
      if (auto e = take("response_format", JsonSchemaToGbnf(f["json_schema"]["schema"]))) return e;
    } else if (type != "text") {
      return Bad("response_format",
                 "'response_format' must be {\"type\": \"text\"}, \"json_object\" or "
                 "\"json_schema\"");
    }
  }
  if (from.empty()) return std::nullopt;
  auto grammar = ParseGbnf(gbnf);
  if (!grammar.ok()) return Bad(from, grammar.status().message());
  out.grammar = std::make_shared<const Grammar>(std::move(grammar).value());
  return std::nullopt;
}

// A value that asks for nothing: null, false, 0, "", [], {}, "none",
// "auto" for tool_choice without tools.
bool AsksNothing(const std::string& key, const json& v) {
  if (v.is_null() || v == false || v == 0 || v == "" || (v.is_array() && v.empty()) ||
      (v.is_object() && v.empty())) {
    return true;
  }
  return (key == "tool_choice" || key == "function_call") && (v == "none" || v == "auto");
}

std::optional<ApiError> RefuseUnsupported(const json& j) {
  for (const char* key : kUnsupportedFields) {
    if (j.contains(key) && !AsksNothing(key, j[key])) {
      return Bad(key, fmt::format("'{}' is not supported by h2o serve (it would be ignored, so "
                                  "it is refused)",
                                  key));
    }
  }
  return std::nullopt;
}

std::optional<ApiError> Parse(const json& j, bool chat, CompletionParams& out) {
  if (!j.is_object()) return Bad("", "the request body must be a JSON object");
  out.chat = chat;
  if (j.contains("model")) {
    if (!j["model"].is_string()) return Bad("model", "'model' must be a string");
    out.model = j["model"].get<std::string>();
  }
  if (auto e = chat ? ReadMessages(j, out) : ReadPrompt(j, out)) return e;
  std::optional<int64_t> v;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    v.reset();
    if (auto e = ReadInt(j, key, 1, std::numeric_limits<int32_t>::max(), v)) return e;
    if (v) out.max_tokens = static_cast<int32_t>(*v);
  }
  if (!out.max_tokens) {
    // llama-server's n_predict: -1 is the rest of the context.
    v.reset();
    if (auto e = ReadInt(j, "n_predict", -1, std::numeric_limits<int32_t>::max(), v)) return e;
    if (v == 0) return Bad("n_predict", "'n_predict' must be -1 (the rest of the context) or >= 1");
    if (v && *v > 0) out.max_tokens = static_cast<int32_t>(*v);
  }
  if (auto e = ReadInt(j, "n_keep", -1, std::numeric_limits<int32_t>::max(), out.n_keep)) return e;
  if (auto e = ReadSampling(j, out)) return e;
  if (auto e = RefuseUnsupported(j)) return e;
  if (auto e = ReadGrammar(j, out)) return e;
  if (auto e = ReadNumber(j, "temperature", 0.0, 2.0, out.temperature)) return e;
  if (auto e = ReadNumber(j, "top_p", 0.0, 1.0, out.top_p)) return e;
  if (j.contains("top_p") && j["top_p"].is_number() && out.top_p <= 0.0f) {
    return Bad("top_p", "'top_p' must be greater than 0");
  }
  v.reset();
  if (auto e = ReadInt(j, "top_k", 0, std::numeric_limits<int32_t>::max(), v)) return e;
  if (v) out.top_k = static_cast<int32_t>(*v);
  v.reset();
  if (auto e = ReadInt(j, "seed", std::numeric_limits<int64_t>::min(),
                       std::numeric_limits<int64_t>::max(), v)) {
    return e;
  }
  if (v) out.seed = static_cast<uint64_t>(*v);
  v.reset();
  if (auto e = ReadInt(j, "n", 1, 1, v)) {
    e->message = "only n = 1 is supported";
    return e;
  }
  if (j.contains("best_of") && !j["best_of"].is_null() && j["best_of"] != 1) {
    return Bad("best_of", "only best_of = 1 is supported");
  }
  if (auto e = ReadStop(j, out)) return e;
  if (auto e = ReadBool(j, "stream", out.stream)) return e;
  if (j.contains("stream_options") && j["stream_options"].is_object()) {
    if (auto e = ReadBool(j["stream_options"], "include_usage", out.include_usage)) return e;
  }
  if (chat) {
    if (auto e = ReadBool(j, "logprobs", out.logprobs)) return e;
    v.reset();
    if (auto e = ReadInt(j, "top_logprobs", 0, 20, v)) return e;
    if (v) out.top_logprobs = static_cast<int32_t>(*v);
  } else {
    v.reset();
    if (auto e = ReadInt(j, "logprobs", 0, 5, v)) return e;
    if (v) {
      out.logprobs = true;
      out.top_logprobs = static_cast<int32_t>(*v);
    }
    if (auto e = ReadBool(j, "echo", out.echo)) return e;
  }
  if (auto e = ReadBool(j, "ignore_eos", out.ignore_eos)) return e;
  if (auto e = ReadBool(j, "cache_prompt", out.cache_prompt)) return e;
  if (auto e = ReadBool(j, "kv_endpoint", out.kv_endpoint)) return e;
  if (j.contains("kv") && !j["kv"].is_null()) {
    if (!j["kv"].is_string())
      return Bad("kv", "'kv' must be a KV policy string, e.g. \"h2o:heavy=10%,recent=10%\"");
    out.kv = j["kv"].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace

std::string ErrorBody(const ApiError& error) {
  json e = {{"message", error.message},
            {"type", error.type},
            {"param", error.param.empty() ? json() : json(error.param)},
            {"code", error.code.empty() ? json() : json(error.code)}};
  return BodyText({{"error", e}});
}

std::optional<ApiError> ParseCompletionRequest(std::string_view body, bool chat,
                                               CompletionParams& out) {
  json j;
  if (auto e = ParseJsonBody(body, j)) return e;
  return Parse(j, chat, out);
}

}  // namespace h2o::server
