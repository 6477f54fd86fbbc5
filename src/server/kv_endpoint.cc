#include "server/kv_endpoint.h"

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "report/kv_dump.h"
#include "server/json_fields.h"

namespace h2o::server {

std::optional<ApiError> ParseKvLayer(const std::optional<std::string>& text, int32_t n_layer,
                                     std::optional<int32_t>& layer) {
  layer.reset();
  if (!text || *text == "all") return std::nullopt;
  int32_t value = -1;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (text->empty() || ec != std::errc() || ptr != end || value < 0 || value >= n_layer) {
    return ApiError{400,
                    fmt::format("layer must be 'all' or a layer index from 0 to {}, not '{}'",
                                n_layer - 1, *text),
                    "invalid_request_error", "layer", ""};
  }
  layer = value;
  return std::nullopt;
}

std::string KvStateBody(const std::string& id, const KvState* state,
                        std::optional<int32_t> layer, int32_t n_layer, int32_t n_head_kv,
                        const Tokenizer& tokenizer) {
  using nlohmann::json;
  if (state == nullptr) {
    return BodyText({{"id", id},
                     {"object", "kv.cache"},
                     {"status", "queued"},
                     {"n_layer", n_layer},
                     {"n_head_kv", n_head_kv},
                     {"n_past", 0},
                     {"layers", json::array()}});
  }
  json body = KvDumpObject(state->cache, layer);
  body["id"] = id;
  body["object"] = "kv.cache";
  body["status"] = state->finished ? "finished" : "running";
  body["n_layer"] = state->cache.n_layer;
  body["n_head_kv"] = state->cache.n_head_kv;
  body["n_past"] = state->n_past;
  body["kv_bytes"] = state->kv_bytes;
  body["kv_bytes_kept"] = state->kv_bytes_kept;
  body["kv_bytes_full"] = state->kv_bytes_full;
  body["evictions"] = state->evictions;
  json tokens = json::array();
  for (const int32_t t : state->tokens) tokens.push_back(tokenizer.TokenToPiece(t));
  body["tokens"] = std::move(tokens);
  // The all-layers summary: a position kept in many slots is a heavy hitter.
  std::vector<int32_t> slots(state->n_past, 0);
  for (const KvSnapshot::Head& h : state->cache.heads) {
    for (const int32_t pos : h.positions) {
      if (pos >= 0 && pos < state->n_past) slots[pos] += 1;
    }
  }
  body["slots_per_position"] = std::move(slots);
  // A byte-level token's piece may be part of a UTF-8 character.
  return BodyText(body);
}

}  // namespace h2o::server
