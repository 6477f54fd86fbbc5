// Reading request bodies' JSON fields with OpenAI-shaped errors: each
// reader leaves the value alone when the field is absent or null, and
// names the field when it has the wrong type or range. Shared by every
// endpoint that takes a body, as is BodyText for what they answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_request.h"

namespace h2o::server {

// JSON bodies nesting arrays and objects deeper than this are refused
// before they are parsed (no OpenAI request comes near it).
inline constexpr size_t kMaxJsonDepth = 64;

// How deep `text` nests arrays and objects, counted in one pass without
// parsing (brackets inside strings do not count). Malformed JSON gives a
// number too; the parser refuses it afterwards.
size_t JsonDepth(std::string_view text);

// A response body's text. Token pieces may end inside a UTF-8 character:
// invalid bytes are replaced, so the body stays valid JSON (never a throw).
std::string BodyText(const nlohmann::json& j);

// A 400 naming `param` (empty: the body as a whole).
ApiError Bad(std::string param, std::string message);

// `body` parsed into `out`: a 400 when it nests deeper than kMaxJsonDepth,
// is not JSON, or (object_only) is not an object.
std::optional<ApiError> ParseJsonBody(std::string_view body, nlohmann::json& out,
                                      bool object_only = false);

std::optional<ApiError> ReadNumber(const nlohmann::json& j, const char* key, double lo, double hi,
                                   float& value);
std::optional<ApiError> ReadInt(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi,
                                std::optional<int64_t>& value);
std::optional<ApiError> ReadBool(const nlohmann::json& j, const char* key, bool& value);

}  // namespace h2o::server
