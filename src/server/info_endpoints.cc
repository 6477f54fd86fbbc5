#include "server/info_endpoints.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "server/json_fields.h"
#include "tokenizer/utf8.h"

namespace h2o::server {
namespace {

using nlohmann::json;

// As llama-server: a piece that is whole UTF-8 as a string, else its bytes.
json Piece(const std::string& piece) {
  if (FindInvalidUtf8(piece) == std::string::npos) return piece;
  json bytes = json::array();
  for (const char c : piece) bytes.push_back(static_cast<uint8_t>(c));
  return bytes;
}

json ModelJson(const ServerProps& p) {
  return {{"id", p.model_id},
          {"object", "model"},
          {"created", 0},
          {"owned_by", "h2o.cpp"},
          {"meta",
           {{"n_ctx_train", p.n_ctx_train},
            {"n_vocab", p.n_vocab},
            {"n_layer", p.n_layer},
            {"n_ctx", p.n_ctx},
            {"kv", p.default_kv}}}};
}
}  // namespace

std::optional<ApiError> TokenizeBody(std::string_view body, const Tokenizer& tokenizer,
                                     std::string& out) {
  json j;
  if (auto e = ParseJsonBody(body, j, /*object_only=*/true)) return e;
  if (!j.contains("content") || !j["content"].is_string()) {
    return Bad("content", "'content' is required: the text to tokenize");
  }
  bool add_special = false;
  bool parse_special = true;
  bool with_pieces = false;
  if (auto e = ReadBool(j, "add_special", add_special)) return e;
  if (auto e = ReadBool(j, "parse_special", parse_special)) return e;
  if (auto e = ReadBool(j, "with_pieces", with_pieces)) return e;
  if (!parse_special) {
    return Bad("parse_special",
               "'parse_special': false is not supported: special tokens written in the text "
               "are always read as their ids");
  }
  const std::vector<int32_t> ids = tokenizer.Encode(j["content"].get<std::string>(), add_special);
  json tokens = json::array();
  for (const int32_t id : ids) {
    if (with_pieces) {
      tokens.push_back({{"id", id}, {"piece", Piece(tokenizer.TokenToPiece(id))}});
    } else {
      tokens.push_back(id);
    }
  }
  out = BodyText({{"tokens", tokens}});
  return std::nullopt;
}

std::optional<ApiError> DetokenizeBody(std::string_view body, const Tokenizer& tokenizer,
                                       std::string& out) {
  json j;
  if (auto e = ParseJsonBody(body, j, /*object_only=*/true)) return e;
  if (!j.contains("tokens") || !j["tokens"].is_array()) {
    return Bad("tokens", "'tokens' is required: an array of token ids");
  }
  std::vector<int32_t> ids;
  ids.reserve(j["tokens"].size());
  for (const json& id : j["tokens"]) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= tokenizer.n_vocab()) {
      return Bad("tokens", fmt::format("'tokens' must hold token ids from 0 to {}, got {}",
                                       tokenizer.n_vocab() - 1, id.dump()));
    }
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  out = BodyText({{"content", tokenizer.Decode(ids, /*remove_special=*/false)}});
  return std::nullopt;
}

std::string PropsBody(const ServerProps& p) {
  json settings = {{"n_ctx", p.n_ctx},
                   {"params",
                    {{"n_predict", p.default_max_tokens},
                     {"temperature", 1.0},
                     {"top_p", 1.0},
                     {"top_k", 0},
                     {"cache_prompt", p.prompt_cache_bytes > 0},
                     {"kv", p.default_kv}}}};
  return BodyText({{"default_generation_settings", settings},
                   {"total_slots", p.total_slots},
                   {"model_alias", p.model_id},
                   {"model_path", p.model_path},
                   {"chat_template", p.chat_template},
                   {"modalities", {{"vision", false}, {"audio", false}}},
                   {"build_info", p.build_info},
                   {"h2o",
                    {{"kv", p.default_kv},
                     {"kv_memory_bytes", p.kv_memory_bytes},
                     {"prompt_cache_bytes", p.prompt_cache_bytes},
                     {"n_threads", p.n_threads},
                     {"n_ctx_train", p.n_ctx_train}}}});
}

std::string SlotsBody(const std::vector<SlotInfo>& slots) {
  json list = json::array();
  for (const SlotInfo& s : slots) {
    const bool prefilling = s.n_prompt_fed < s.n_prompt;
    list.push_back({{"id", s.request_id},
                    {"n_ctx", s.n_ctx},
                    {"is_processing", true},
                    {"state", prefilling ? "prompt" : "generating"},
                    {"n_prompt_tokens", s.n_prompt},
                    {"n_prompt_tokens_processed", s.n_prompt_fed},
                    {"n_prompt_tokens_cached", s.cached_tokens},
                    {"n_decoded", s.n_generated},
                    {"n_past", s.n_past},
                    {"params", {{"n_predict", s.max_tokens}, {"kv", s.kv}}},
                    {"kv_reserved_bytes", s.kv_reserved_bytes},
                    {"kv_held_bytes", s.kv_held_bytes}});
  }
  return BodyText(list);
}

std::string ModelObject(const ServerProps& props) { return BodyText(ModelJson(props)); }

std::string ModelListBody(const ServerProps& props) {
  return BodyText({{"object", "list"}, {"data", json::array({ModelJson(props)})}});
}

}  // namespace h2o::server
