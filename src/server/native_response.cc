#include "server/native_response.h"

#include <nlohmann/json.hpp>

#include "server/json_fields.h"

namespace h2o::server {
namespace {

using nlohmann::json;

const char* StopType(FinishReason reason) {
  switch (reason) {
    case FinishReason::kEndOfGeneration:
      return "eos";
    case FinishReason::kStopped:
      return "word";
    case FinishReason::kLength:
      return "limit";
    case FinishReason::kCancelled:
    case FinishReason::kError:
      break;
  }
  return "none";
}

double PerSecond(int32_t n, double ms) { return ms > 0 ? n * 1e3 / ms : 0; }

}  // namespace

std::string NativeChunkBody(std::string_view content, int32_t tokens_predicted,
                            int32_t tokens_evaluated) {
  return BodyText({{"content", content},
                   {"stop", false},
                   {"index", 0},
                   {"id_slot", -1},
                   {"tokens_predicted", tokens_predicted},
                   {"tokens_evaluated", tokens_evaluated}});
}

std::string NativeFinalBody(const CompletionParams& p, const ResponseHeader& header,
                            std::string_view prompt, std::string_view content,
                            FinishReason reason, const Usage& u, int32_t max_tokens,
                            const NativeTimings& t) {
  const int32_t fed = u.prompt_tokens - u.cached_tokens;
  json settings = {{"n_predict", max_tokens},
                   {"temperature", p.temperature},
                   {"top_k", p.top_k},
                   {"top_p", p.top_p},
                   {"min_p", p.min_p},
                   {"typical_p", p.typical_p},
                   {"repeat_penalty", p.repeat_penalty},
                   {"repeat_last_n", p.repeat_last_n},
                   {"frequency_penalty", p.frequency_penalty},
                   {"presence_penalty", p.presence_penalty},
                   {"stop", p.stop},
                   {"ignore_eos", p.ignore_eos},
                   {"stream", p.stream},
                   {"cache_prompt", p.cache_prompt},
                   {"kv", u.kv}};
  if (p.seed) settings["seed"] = *p.seed;
  if (p.n_keep) settings["n_keep"] = *p.n_keep;
  return BodyText({{"content", content},
                   {"stop", true},
                   {"index", 0},
                   {"id_slot", -1},
                   {"id", header.id},
                   {"model", header.model},
                   {"prompt", prompt},
                   {"tokens_predicted", u.completion_tokens},
                   {"tokens_evaluated", u.prompt_tokens},
                   {"tokens_cached", u.cached_tokens},
                   {"stop_type", StopType(reason)},
                   {"truncated", false},
                   {"generation_settings", settings},
                   {"timings",
                    {{"cache_n", u.cached_tokens},
                     {"prompt_n", fed},
                     {"prompt_ms", t.prompt_ms},
                     {"prompt_per_second", PerSecond(fed, t.prompt_ms)},
                     {"predicted_n", u.completion_tokens},
                     {"predicted_ms", t.predicted_ms},
                     {"predicted_per_second", PerSecond(u.completion_tokens, t.predicted_ms)}}},
                   {"kv", u.kv},
                   {"kv_bytes", u.kv_bytes},
                   {"evictions", u.evictions}});
}

}  // namespace h2o::server
