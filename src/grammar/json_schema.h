// JSON Schema to GBNF: the grammar whose sentences are JSON texts valid
// against the schema, for response_format {"type": "json_schema"}, the
// json_schema field and --json-schema; JsonGrammar() for {"type":
// "json_object"}.
//
// Honoured: type (one or a list), properties with required (written in the
// order of their names, as nlohmann::json keeps an object's keys: a
// request's own order is gone once it is parsed; optional ones may be left
// out; no other properties are written, which every additionalProperties
// allows), items, prefixItems,
// minItems/maxItems, enum, const, anyOf/oneOf (any alternative), $ref to
// "#", "#/$defs/..." or "#/definitions/...", minLength/maxLength, and the
// annotations (title, description, $schema, $id, default, examples,
// format, additionalProperties, $comment), which constrain nothing here.
// Refused, by name: every other keyword (pattern, minimum, allOf, not,
// uniqueItems, ...), since output that ignores it may be invalid.
// Numbers and whitespace are bounded in length (16 digits; a space, or a
// line break and up to 16 of indentation), so a model cannot run on in one
// forever; strings are bounded only by maxLength.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace h2o {

// Errors (one line): a keyword refused as above, a $ref that does not
// resolve, a schema that is not an object or boolean, min above max.
Result<std::string> JsonSchemaToGbnf(const nlohmann::json& schema);

// Any JSON object (what json_object mode asks for).
std::string JsonObjectGbnf();

}  // namespace h2o
