#include "server/api_response.h"

#include <nlohmann/json.hpp>

#include "server/json_fields.h"

namespace h2o::server {
namespace {

using nlohmann::json;

json UsageJson(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}},
          {"kv_bytes", u.kv_bytes},
          {"kv_policy", u.kv},
          {"evictions", u.evictions}};
}

std::vector<int> Bytes(const std::string& s) {
  std::vector<int> out;
  for (unsigned char c : s) out.push_back(c);
  return out;
}

// completions: {"tokens", "token_logprobs", "top_logprobs", "text_offset"}
json CompletionLogprobs(const std::vector<TokenLogprob>& tokens, size_t offset) {
  json out = {{"tokens", json::array()},
              {"token_logprobs", json::array()},
              {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const TokenLogprob& t : tokens) {
    out["tokens"].push_back(t.piece);
    out["token_logprobs"].push_back(t.logprob);
    json top = json::object();
    for (const auto& [piece, lp] : t.top) top[piece] = lp;
    out["top_logprobs"].push_back(top);
    out["text_offset"].push_back(offset);
    offset += t.piece.size();
  }
  return out;
}

// chat: {"content": [{"token", "logprob", "bytes", "top_logprobs"}]}
json ChatLogprobs(const std::vector<TokenLogprob>& tokens) {
  json content = json::array();
  for (const TokenLogprob& t : tokens) {
    json top = json::array();
    for (const auto& [piece, lp] : t.top) {
      top.push_back({{"token", piece}, {"logprob", lp}, {"bytes", Bytes(piece)}});
    }
    content.push_back({{"token", t.piece},
                       {"logprob", t.logprob},
                       {"bytes", Bytes(t.piece)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json Envelope(const ResponseHeader& header, const char* object) {
  return {
      {"id", header.id}, {"object", object}, {"created", header.created}, {"model", header.model}};
}

}  // namespace

std::string CompletionBody(const CompletionParams& params, const ResponseHeader& header,
                           const std::string& text, size_t text_start,
                           const std::vector<TokenLogprob>& tokens, const char* finish_reason,
                           const Usage& usage) {
  json choice = {{"index", 0}, {"finish_reason", finish_reason}};
  json logprobs;
  if (params.logprobs) {
    logprobs = params.chat ? ChatLogprobs(tokens) : CompletionLogprobs(tokens, text_start);
  }
  choice["logprobs"] = logprobs;
  if (params.chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
  }
  json out = Envelope(header, params.chat ? "chat.completion" : "text_completion");
  out["choices"] = json::array({choice});
  out["usage"] = UsageJson(usage);
  return BodyText(out);
}

std::string ChunkBody(const CompletionParams& params, const ResponseHeader& header,
                      std::string_view delta, const std::vector<TokenLogprob>& tokens,
                      size_t text_offset, const char* finish_reason, bool first) {
  json choice = {{"index", 0},
                 {"finish_reason", finish_reason != nullptr ? json(finish_reason) : json()}};
  json logprobs;
  if (params.logprobs && !tokens.empty()) {
    logprobs = params.chat ? ChatLogprobs(tokens) : CompletionLogprobs(tokens, text_offset);
  }
  choice["logprobs"] = logprobs;
  if (params.chat) {
    json d = json::object();
    if (first) d["role"] = "assistant";
    if (!delta.empty() || (first && finish_reason == nullptr)) d["content"] = std::string(delta);
    choice["delta"] = d;
  } else {
    choice["text"] = std::string(delta);
  }
  json out = Envelope(header, params.chat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array({choice});
  return BodyText(out);
}

std::string UsageChunkBody(const CompletionParams& params, const ResponseHeader& header,
                           const Usage& usage) {
  json out = Envelope(header, params.chat ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array();
  out["usage"] = UsageJson(usage);
  return BodyText(out);
}

std::string SseEvent(std::string_view json) {
  std::string out = "data: ";
  out += json;
  out += "\n\n";
  return out;
}

}  // namespace h2o::server
