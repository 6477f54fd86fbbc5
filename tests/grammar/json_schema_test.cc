// JSON Schema to GBNF: hand-written instances that are valid against a
// schema are sentences of its grammar, and instances that break one of its
// rules are not; keywords that cannot be honoured are refused by name.
#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "grammar/grammar.h"
#include "grammar/grammar_matching.h"

namespace h2o {
namespace {

using nlohmann::json;
using testing::TakesBytes;

std::shared_ptr<const Grammar> FromSchema(const std::string& schema) {
  auto gbnf = JsonSchemaToGbnf(json::parse(schema));
  EXPECT_TRUE(gbnf.ok()) << gbnf.status().message();
  if (!gbnf.ok()) return nullptr;
  auto g = ParseGbnf(*gbnf);
  EXPECT_TRUE(g.ok()) << g.status().message() << "\n" << *gbnf;
  return g.ok() ? std::make_shared<const Grammar>(std::move(g).value()) : nullptr;
}

constexpr const char* kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 5},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"enum": ["a", "b", 3]}, "maxItems": 2},
    "ok": {"type": ["boolean", "null"]}
  },
  "required": ["name"]
})";

TEST(JsonSchemaTest, AnObjectWithRequiredAndOptionalProperties) {
  auto g = FromSchema(kPerson);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, R"({"name":"bob"})"));
  // Properties come in the order of their names.
  EXPECT_TRUE(TakesBytes(g, R"({"age":-42,"name":"bob"})"));
  EXPECT_TRUE(TakesBytes(g, R"({ "name": "al", "ok": null, "tags": ["a", 3] })"));
  EXPECT_TRUE(TakesBytes(g, "{\n  \"age\": 7,\n  \"name\": \"x\",\n  \"ok\": true\n}"));
  EXPECT_FALSE(TakesBytes(g, R"({"name":"bob","age":1})"));               // out of order
  EXPECT_FALSE(TakesBytes(g, R"({"age":3})"));                            // name is required
  EXPECT_FALSE(TakesBytes(g, R"({"name":""})"));                          // minLength 1
  EXPECT_FALSE(TakesBytes(g, R"({"name":"toolong"})"));                   // maxLength 5
  EXPECT_FALSE(TakesBytes(g, R"({"age":1.5,"name":"bob"})"));             // an integer
  EXPECT_FALSE(TakesBytes(g, R"({"age":007,"name":"bob"})"));             // no leading zeros
  EXPECT_FALSE(TakesBytes(g, R"({"name":"bob","tags":["a","b","a"]})"));  // maxItems 2
  EXPECT_FALSE(TakesBytes(g, R"({"name":"bob","tags":["c"]})"));          // not in the enum
  EXPECT_FALSE(TakesBytes(g, R"({"name":"bob",})"));                      // a trailing comma
  EXPECT_FALSE(TakesBytes(g, R"({"name":"bob","ok":1})"));                // boolean or null
}

TEST(JsonSchemaTest, ArraysStringsNumbersAndConst) {
  auto g = FromSchema(R"({"type": "array", "items": {"type": "number"}, "minItems": 2})");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, "[1, -2.5e3]"));
  EXPECT_TRUE(TakesBytes(g, "[0,0.125,3]"));
  EXPECT_FALSE(TakesBytes(g, "[1]"));
  EXPECT_FALSE(TakesBytes(g, "[1, \"2\"]"));
  auto c = FromSchema(R"({"const": {"k": [1, "x\"y"]}})");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(TakesBytes(c, R"({"k":[1,"x\"y"]})"));
  EXPECT_FALSE(TakesBytes(c, R"({"k":[2,"x\"y"]})"));
  auto s = FromSchema(R"({"type": "string"})");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(TakesBytes(s, R"("tab\t, quote \", \u00e9 and é")"));
  EXPECT_FALSE(TakesBytes(s, "\"a\nb\""));  // a raw control character
}

TEST(JsonSchemaTest, ReferencesAndAlternatives) {
  auto g = FromSchema(R"({
    "$defs": {"node": {"type": "object",
                       "properties": {"v": {"type": "integer"},
                                      "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
                       "required": ["v", "next"]}},
    "$ref": "#/$defs/node"})");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, R"({"next":{"next":null,"v":2},"v":1})"));
  EXPECT_FALSE(TakesBytes(g, R"({"next":{"v":2},"v":1})"));
}

TEST(JsonSchemaTest, AnyJsonObject) {
  auto parsed = ParseGbnf(JsonObjectGbnf());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  auto g = std::make_shared<const Grammar>(std::move(parsed).value());
  EXPECT_TRUE(TakesBytes(g, R"({"a": [1, {"b": null}], "c": "d"})"));
  EXPECT_TRUE(TakesBytes(g, "{}"));
  EXPECT_FALSE(TakesBytes(g, "[1]"));  // an object, not an array
  EXPECT_FALSE(TakesBytes(g, R"({"a" 1})"));
}

TEST(JsonSchemaTest, KeywordsItCannotHonourAreRefusedByName) {
  for (const char* keyword : {"pattern", "minimum", "allOf", "not", "uniqueItems"}) {
    json schema = {{"type", "string"}, {keyword, 1}};
    auto gbnf = JsonSchemaToGbnf(schema);
    ASSERT_FALSE(gbnf.ok()) << keyword;
    EXPECT_EQ(gbnf.status().message(),
              std::string("json_schema: '") + keyword +
                  "' is not supported (output could break it, so it is refused)");
  }
  auto bad_ref = JsonSchemaToGbnf(json::parse(R"({"$ref": "#/$defs/none"})"));
  ASSERT_FALSE(bad_ref.ok());
  EXPECT_EQ(bad_ref.status().message(), "json_schema: '$ref' #/$defs/none does not resolve");
}

}  // namespace
}  // namespace h2o
