// One JSONL line from a JSON value holding model text. A model's
// byte-fallback tokens can end a generation inside a UTF-8 sequence, and
// nlohmann's default dump throws on that; here such bytes become U+FFFD,
// so a report of generations is always written.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace h2o {

template <typename Json>
std::string JsonLine(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace h2o
