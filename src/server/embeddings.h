// POST /v1/embeddings in OpenAI's shapes (llama-server's with
// --embeddings): "input" as a string, an array of strings, an array of
// token ids or an array of such arrays; "encoding_format" "float" or
// "base64" (little-endian float32, what OpenAI's Node client asks for by
// default); the answer a list of {"object": "embedding", "index",
// "embedding"} with the usage. The vectors are Engine::Embed's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_request.h"
#include "tokenizer/tokenizer.h"

namespace h2o::server {

// Most inputs in one request (OpenAI's limit).
inline constexpr size_t kMaxEmbeddingInputs = 2048;

struct EmbeddingParams {
  std::vector<std::string> texts;             // inputs given as text
  std::vector<std::vector<int32_t>> ids;      // inputs given as ids
  bool base64 = false;
};

// Errors: not an object, no input, an empty or wrong-typed input, more than
// kMaxEmbeddingInputs, an encoding other than float/base64, "dimensions".
std::optional<ApiError> ParseEmbeddingRequest(std::string_view body, EmbeddingParams& out);

// {"object": "list", "data": [...], "model", "usage": {"prompt_tokens",
// "total_tokens"}}.
std::string EmbeddingsBody(const std::vector<std::vector<float>>& vectors, bool base64,
                           const std::string& model, int64_t prompt_tokens);

// Standard base64 (RFC 4648, with padding) of `bytes`.
std::string Base64(std::string_view bytes);

}  // namespace h2o::server
