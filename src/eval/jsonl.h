// JSON-Lines task files (`h2o eval --task FILE.jsonl`): one JSON object per
// non-blank line, read whole, with typed field access whose errors name
// the file and line ("task.jsonl:12: field 'gold' must be an integer").
// Objects keep their key order, so a request can be echoed back exactly as
// it was written (the H2O repository matches results to requests by their
// serialized text).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace h2o {

struct JsonlLine {
  std::string where;             // "path:line", for messages
  nlohmann::ordered_json value;  // always an object
};

// Errors: the file cannot be read, a line is not valid JSON or not an
// object, or the file holds no lines.
Result<std::vector<JsonlLine>> ReadJsonl(const std::string& path);

// Typed access to a required field. Errors name line.where and the key.
Result<std::string> StringField(const JsonlLine& line, const char* key);
Result<int64_t> IntField(const JsonlLine& line, const char* key);
Result<std::vector<std::string>> StringListField(const JsonlLine& line, const char* key);

// Optional fields: `fallback` when the key is absent or null; an error when
// present with the wrong type.
Result<double> NumberField(const JsonlLine& line, const char* key, double fallback);
Result<int64_t> IntField(const JsonlLine& line, const char* key, int64_t fallback);
// A string or a list of strings ("stop": "###" or ["###", "\n"]).
Result<std::vector<std::string>> StringsField(const JsonlLine& line, const char* key);

}  // namespace h2o
