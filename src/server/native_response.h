// llama-server's own response shapes for POST /completion (its native API,
// which its web UI and many scripts call): {"content", "stop", ...}, a
// stream of such objects as Server-Sent Events with no "[DONE]", and the
// last one carrying the figures (tokens_predicted, tokens_evaluated,
// tokens_cached, stop_type, generation_settings, timings). h2o adds the
// request's KV cache (kv, kv_bytes, evictions), as its usage block does.
#pragma once

#include <string>
#include <string_view>

#include "runtime/scheduler.h"
#include "server/api_request.h"
#include "server/api_response.h"

namespace h2o::server {

struct NativeTimings {
  double prompt_ms = 0;     // from arrival to the first token
  double predicted_ms = 0;  // from the first token to the end
};

// A streamed piece of text: {"content", "stop": false, "index", "id_slot",
// "tokens_predicted", "tokens_evaluated"}.
std::string NativeChunkBody(std::string_view content, int32_t tokens_predicted,
                            int32_t tokens_evaluated);

// The whole response (not streamed: `content` is all the text), or the
// last event of a stream (`content` the text held back to the end).
// "stop_type": "eos" (an end-of-generation token), "word" (a stop string),
// "limit" (n_predict or the context), "none" (cancelled).
std::string NativeFinalBody(const CompletionParams& params, const ResponseHeader& header,
                            std::string_view prompt, std::string_view content,
                            FinishReason reason, const Usage& usage, int32_t max_tokens,
                            const NativeTimings& timings);

}  // namespace h2o::server
