// OpenAI-shaped request bodies (/v1/completions, /v1/chat/completions)
// parsed and validated into a plain struct; nothing here touches the
// engine. A bad body yields an ApiError: its HTTP status and OpenAI's error
// fields ({"error": {"message", "type", "param", "code"}}).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/chat_template.h"
#include "grammar/grammar.h"

namespace h2o::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the offending field, or empty
  std::string code;   // empty, or e.g. "context_length_exceeded"
};

// The error body OpenAI's clients read.
std::string ErrorBody(const ApiError& error);

struct CompletionParams {
  bool chat = false;
  std::string model;
  // /v1/completions: the prompt as text, or as token ids used as given.
  std::string prompt_text;
  std::vector<int32_t> prompt_ids;
  bool prompt_is_ids = false;
  // /v1/chat/completions
  std::vector<ChatMessage> messages;

  std::optional<int32_t> max_tokens;  // unset: up to the context
  float temperature = 1.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  // llama-server's and OpenAI's sampling fields (runtime/sampler.h).
  float min_p = 0.0f;
  float typical_p = 1.0f;
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::vector<std::pair<int32_t, float>> logit_bias;  // ids not yet checked against the vocabulary
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;  // at most 4, none empty
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // Log-probabilities of the generated tokens and of this many
  // alternatives each (completions: "logprobs": N; chat: "logprobs": true
  // with "top_logprobs": N).
  bool logprobs = false;
  int32_t top_logprobs = 0;
  bool echo = false;        // completions only: the prompt text before the generated
  bool ignore_eos = false;  // llama.cpp's extension: generate through end-of-generation tokens
  // llama-server's: resume from the prompt cache and leave this request's
  // states in it (when the server keeps one).
  bool cache_prompt = true;
  std::string kv;           // a KV policy for this request ("" = the server's)
  // llama-server's: pin the first n_keep prompt tokens whatever the policy
  // evicts (-1: a chat's system prompt, a completion's whole prompt);
  // unset: the server's --kv-keep.
  std::optional<int64_t> n_keep;
  // Keep this request's cache readable at GET /v1/kv/{id} (the playground
  // asks; the server's --kv-endpoint turns it on for every request).
  bool kv_endpoint = false;
  // What the output must match (grammar/grammar.h): from llama-server's
  // "grammar" (GBNF) or "json_schema", or OpenAI's response_format of
  // json_object or json_schema. Null: anything.
  std::shared_ptr<const Grammar> grammar;
};

// Fields a client may send that h2o does not implement: each is a 400
// naming it, never accepted and ignored (a value that changes nothing,
// such as "tools": [], is accepted).
inline constexpr const char* kUnsupportedFields[] = {
    "tools",           "tool_choice", "functions", "function_call", "mirostat", "dry_multiplier",
    "xtc_probability", "suffix",      "n_probs",   "prediction",    "audio",    "modalities"};

// Parses a /v1/completions (chat = false) or /v1/chat/completions body,
// refusing one deeper than kMaxJsonDepth (json_fields.h) before parsing it.
// Fields that change nothing (user, metadata) are accepted; n other than 1,
// best_of, kUnsupportedFields asking for something, and wrong types or
// ranges are errors.
std::optional<ApiError> ParseCompletionRequest(std::string_view body, bool chat,
                                               CompletionParams& out);

}  // namespace h2o::server
