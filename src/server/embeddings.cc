#include "server/embeddings.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "server/json_fields.h"

namespace h2o::server {
namespace {

using nlohmann::json;

bool IsIdArray(const json& a) {
  if (!a.is_array() || a.empty()) return false;
  for (const json& v : a) {
    if (!v.is_number_integer()) return false;
  }
  return true;
}

std::optional<ApiError> ReadIds(const json& a, std::vector<int32_t>& out) {
  for (const json& v : a) {
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
      return Bad("input", fmt::format("'input' has token id {}, not a valid id", id));
    }
    out.push_back(static_cast<int32_t>(id));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> ParseEmbeddingRequest(std::string_view body, EmbeddingParams& out) {
  json j;
  if (auto e = ParseJsonBody(body, j, /*object_only=*/true)) return e;
  if (j.contains("dimensions") && !j["dimensions"].is_null()) {
    return Bad("dimensions", "'dimensions' is not supported: embeddings have the model's width");
  }
  if (j.contains("encoding_format") && !j["encoding_format"].is_null()) {
    const json& f = j["encoding_format"];
    if (!f.is_string() || (f != "float" && f != "base64")) {
      return Bad("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
    }
    out.base64 = f == "base64";
  }
  if (!j.contains("input") || j["input"].is_null()) return Bad("input", "'input' is required");
  const json& input = j["input"];
  const std::string shapes =
      "'input' must be a string, an array of strings, an array of token ids or an array of "
      "arrays of token ids, none empty";
  if (input.is_string()) {
    out.texts.push_back(input.get<std::string>());
  } else if (IsIdArray(input)) {
    out.ids.emplace_back();
    if (auto e = ReadIds(input, out.ids.back())) return e;
  } else if (input.is_array() && !input.empty()) {
    if (input.size() > kMaxEmbeddingInputs) {
      return Bad("input", fmt::format("'input' has {} inputs, more than {}", input.size(),
                                      kMaxEmbeddingInputs));
    }
    const bool texts = input[0].is_string();
    for (const json& item : input) {
      if (texts && item.is_string()) {
        out.texts.push_back(item.get<std::string>());
      } else if (!texts && IsIdArray(item)) {
        out.ids.emplace_back();
        if (auto e = ReadIds(item, out.ids.back())) return e;
      } else {
        return Bad("input", shapes + " (and all of one kind)");
      }
    }
  } else {
    return Bad("input", shapes);
  }
  for (const std::string& t : out.texts) {
    if (t.empty()) return Bad("input", shapes);
  }
  return std::nullopt;
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 |
                       static_cast<uint8_t>(bytes[i + 1]) << 8 | static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string EmbeddingsBody(const std::vector<std::vector<float>>& vectors, bool base64,
                           const std::string& model, int64_t prompt_tokens) {
  json data = json::array();
  for (size_t i = 0; i < vectors.size(); ++i) {
    json item = {{"object", "embedding"}, {"index", i}};
    if (base64) {
      static_assert(std::endian::native == std::endian::little, "float32 little-endian");
      item["embedding"] = Base64(std::string_view(
          reinterpret_cast<const char*>(vectors[i].data()), vectors[i].size() * sizeof(float)));
    } else {
      item["embedding"] = vectors[i];
    }
    data.push_back(std::move(item));
  }
  return BodyText({{"object", "list"},
                   {"data", std::move(data)},
                   {"model", model},
                   {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}});
}

}  // namespace h2o::server
