#include "server/json_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace h2o::server {

using nlohmann::json;

std::string BodyText(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

size_t JsonDepth(std::string_view text) {
  size_t depth = 0;
  size_t deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

ApiError Bad(std::string param, std::string message) {
  return {400, std::move(message), "invalid_request_error", std::move(param), ""};
}

// A number field within [lo, hi]; absent or null keeps `value`.
std::optional<ApiError> ReadNumber(const json& j, const char* key, double lo, double hi,
                                   float& value) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number()) return Bad(key, fmt::format("'{}' must be a number", key));
  const double v = j[key].get<double>();
  if (!(v >= lo && v <= hi)) {
    return Bad(key, fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, v));
  }
  value = static_cast<float>(v);
  return std::nullopt;
}

std::optional<ApiError> ReadInt(const json& j, const char* key, int64_t lo, int64_t hi,
                                std::optional<int64_t>& value) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number_integer()) return Bad(key, fmt::format("'{}' must be an integer", key));
  const int64_t v =
      j[key].is_number_unsigned()
          ? static_cast<int64_t>(std::min<uint64_t>(
                j[key].get<uint64_t>(), static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
          : j[key].get<int64_t>();
  if (v < lo || v > hi) {
    return Bad(key, fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, v));
  }
  value = v;
  return std::nullopt;
}

std::optional<ApiError> ReadBool(const json& j, const char* key, bool& value) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_boolean()) return Bad(key, fmt::format("'{}' must be true or false", key));
  value = j[key].get<bool>();
  return std::nullopt;
}

std::optional<ApiError> ParseJsonBody(std::string_view body, json& out, bool object_only) {
  if (const size_t depth = JsonDepth(body); depth > kMaxJsonDepth) {
    return Bad("", fmt::format("the request body nests arrays and objects {} deep; at most {} "
                               "levels are accepted",
                               depth, kMaxJsonDepth));
  }
  out = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) return Bad("", "the request body is not valid JSON");
  if (object_only && !out.is_object()) return Bad("", "the request body must be a JSON object");
  return std::nullopt;
}

}  // namespace h2o::server
