// OpenAI-shaped response bodies: a whole completion, the chunks of a
// stream (Server-Sent Events "data: {...}"), and the usage block, which
// also reports the request's KV cache (bytes, policy, evictions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/api_request.h"

namespace h2o::server {

struct TokenLogprob {
  std::string piece;
  double logprob = 0.0;
  std::vector<std::pair<std::string, double>> top;  // most likely first
};

// Fixed for a request: its id, creation time and model name.
struct ResponseHeader {
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  size_t kv_bytes = 0;
  int64_t evictions = 0;
  int32_t cached_tokens = 0;  // prompt tokens resumed from the prompt cache
  std::string kv;  // the policy, resolved
};

// A whole (non-streamed) response. `text` is what the client sees (the
// prompt first when echo); `tokens` the generated tokens' log-probabilities
// (used when params.logprobs), their pieces laid out after `text_start`
// bytes of text.
std::string CompletionBody(const CompletionParams& params, const ResponseHeader& header,
                           const std::string& text, size_t text_start,
                           const std::vector<TokenLogprob>& tokens, const char* finish_reason,
                           const Usage& usage);

// One streamed chunk: a text delta with its tokens' log-probabilities, or
// (finish_reason set) the last one. `first` chat chunks carry the role.
std::string ChunkBody(const CompletionParams& params, const ResponseHeader& header,
                      std::string_view delta, const std::vector<TokenLogprob>& tokens,
                      size_t text_offset, const char* finish_reason, bool first);

// The final usage chunk of a stream (stream_options.include_usage).
std::string UsageChunkBody(const CompletionParams& params, const ResponseHeader& header,
                           const Usage& usage);

// "data: <json>\n\n"
std::string SseEvent(std::string_view json);

}  // namespace h2o::server
