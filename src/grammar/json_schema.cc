#include "grammar/json_schema.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <vector>

namespace h2o {
namespace {

using nlohmann::json;

// The JSON values, as rules every schema's grammar may use.
// Whitespace: nothing, a space, or one line break and its indentation,
// so a model cannot fill the text with blank lines.
constexpr const char* kJsonRules = R"(ws ::= (" " | "\n" [ \t]{0,16})?
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws
array ::= "[" ws (value ("," ws value)*)? "]" ws
string ::= "\"" char* "\"" ws
char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
int-part ::= "-"? ([0-9] | [1-9] [0-9]{1,15})
integer ::= int-part ws
number ::= int-part ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? ws
)";

const std::set<std::string>& Annotations() {
  static const std::set<std::string> keys = {"title",
                                             "description",
                                             "$schema",
                                             "$id",
                                             "default",
                                             "examples",
                                             "format",
                                             "$comment",
                                             "$defs",
                                             "definitions",
                                             "additionalProperties",
                                             "readOnly",
                                             "writeOnly",
                                             "deprecated"};
  return keys;
}

const std::set<std::string>& Honoured() {
  static const std::set<std::string> keys = {
      "type", "properties", "required", "items", "prefixItems", "minItems",  "maxItems",
      "enum", "const",      "anyOf",    "oneOf", "$ref",        "minLength", "maxLength"};
  return keys;
}

// A GBNF string literal of `text` (bytes as they are; quotes, backslashes
// and control characters escaped).
std::string Literal(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string Repeat(const std::string& item, int64_t min, int64_t max) {
  if (max < 0) return fmt::format("({}){{{},}}", item, min);
  return fmt::format("({}){{{},{}}}", item, min, max);
}

class Converter {
 public:
  explicit Converter(const json& root) : root_(root) {}

  Result<std::string> Convert() {
    auto root = Visit(root_, "root-value");
    if (!root.ok()) return root.status();
    std::string out = "root ::= ws " + *root + "\n" + kJsonRules;
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out;
  }

 private:
  std::string NewRule(const std::string& hint) {
    std::string name = hint;
    for (char& c : name) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!ok) c = '-';
    }
    name = "s-" + name;
    std::string unique = name;
    for (int i = 2; rules_.count(unique) != 0; ++i) unique = fmt::format("{}-{}", name, i);
    rules_[unique] = "";
    return unique;
  }

  Result<std::string> Define(const std::string& hint, Result<std::string> body) {
    if (!body.ok()) return body.status();
    const std::string name = NewRule(hint);
    rules_[name] = *body;
    return name;
  }

  Result<std::string> Visit(const json& schema, const std::string& hint) {
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return std::string("value");
      return Status::Error("json_schema: a schema of false accepts nothing");
    }
    if (!schema.is_object()) return Status::Error("json_schema: a schema must be an object");
    for (const auto& [key, unused] : schema.items()) {
      if (Honoured().count(key) == 0 && Annotations().count(key) == 0) {
        return Status::Error(fmt::format(
            "json_schema: '{}' is not supported (output could break it, so it is refused)", key));
      }
    }
    if (schema.contains("$ref")) return Ref(schema["$ref"]);
    if (schema.contains("const")) return Define(hint, Literal(schema["const"].dump()) + " ws");
    if (schema.contains("enum")) {
      if (!schema["enum"].is_array() || schema["enum"].empty()) {
        return Status::Error("json_schema: 'enum' must be a non-empty array");
      }
      std::string body;
      for (const json& v : schema["enum"]) body += (body.empty() ? "" : " | ") + Literal(v.dump());
      return Define(hint, "(" + body + ") ws");
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!schema.contains(key)) continue;
      if (!schema[key].is_array() || schema[key].empty()) {
        return Status::Error(fmt::format("json_schema: '{}' must be a non-empty array", key));
      }
      std::string body;
      for (size_t i = 0; i < schema[key].size(); ++i) {
        auto alt = Visit(schema[key][i], fmt::format("{}-{}", hint, i));
        if (!alt.ok()) return alt;
        body += (body.empty() ? "" : " | ") + *alt;
      }
      return Define(hint, body);
    }
    if (schema.contains("type") && schema["type"].is_array()) {
      std::string body;
      for (const json& t : schema["type"]) {
        json one = schema;
        one["type"] = t;
        auto alt = Visit(one, hint + "-" + t.dump());
        if (!alt.ok()) return alt;
        body += (body.empty() ? "" : " | ") + *alt;
      }
      if (body.empty()) return Status::Error("json_schema: 'type' must not be an empty list");
      return Define(hint, body);
    }
    std::string type;
    if (schema.contains("type")) {
      if (!schema["type"].is_string()) return Status::Error("json_schema: 'type' must be a string");
      type = schema["type"].get<std::string>();
    } else if (schema.contains("properties") || schema.contains("required")) {
      type = "object";
    } else if (schema.contains("items") || schema.contains("prefixItems")) {
      type = "array";
    } else if (schema.contains("minLength") || schema.contains("maxLength")) {
      type = "string";
    } else {
      return std::string("value");
    }
    if (type == "object") return Object(schema, hint);
    if (type == "array") return Array(schema, hint);
    if (type == "string") return String(schema, hint);
    if (type == "integer" || type == "number") return type;
    if (type == "boolean") return Define(hint, std::string("(\"true\" | \"false\") ws"));
    if (type == "null") return Define(hint, std::string("\"null\" ws"));
    return Status::Error(fmt::format("json_schema: unknown type '{}'", type));
  }

  Result<std::string> Ref(const json& ref) {
    if (!ref.is_string()) return Status::Error("json_schema: '$ref' must be a string");
    const std::string path = ref.get<std::string>();
    if (auto it = refs_.find(path); it != refs_.end()) return it->second;
    if (path.empty() || path[0] != '#') {
      return Status::Error("json_schema: only local references ('#/...') are supported: " + path);
    }
    const json* target = &root_;
    try {
      if (path.size() > 1) target = &root_.at(json::json_pointer(path.substr(1)));
    } catch (const json::exception&) {
      return Status::Error("json_schema: '$ref' " + path + " does not resolve");
    }
    // Named before it is visited, so a schema that refers to itself
    // (a tree, a linked list) becomes a recursive rule.
    const std::string name = NewRule("ref" + path.substr(1));
    refs_[path] = name;
    auto body = Visit(*target, name + "-body");
    if (!body.ok()) return body;
    rules_[name] = *body;
    return name;
  }

  Result<std::string> Object(const json& schema, const std::string& hint) {
    if (!schema.contains("properties")) {
      if (schema.contains("required") && !schema["required"].empty()) {
        return Status::Error("json_schema: 'required' names properties that 'properties' lacks");
      }
      return std::string("object");
    }
    const json& properties = schema["properties"];
    if (!properties.is_object())
      return Status::Error("json_schema: 'properties' must be an object");
    std::set<std::string> required;
    if (schema.contains("required")) {
      if (!schema["required"].is_array())
        return Status::Error("json_schema: 'required' must be an array");
      for (const json& r : schema["required"]) {
        if (!r.is_string() || !properties.contains(r.get<std::string>())) {
          return Status::Error("json_schema: 'required' names properties that 'properties' lacks");
        }
        required.insert(r.get<std::string>());
      }
    }
    struct Member {
      std::string pair;  // the key, the colon and the value
      bool required;
    };
    std::vector<Member> members;
    for (const auto& [key, sub] : properties.items()) {
      auto value = Visit(sub, hint + "-" + key);
      if (!value.ok()) return value;
      members.push_back(
          {Literal(json(key).dump()) + " ws \":\" ws " + *value, required.count(key) > 0});
    }
    // after[i]: properties i.. once one has been written (each opens with
    // a comma); first[i]: the same before any has (the first without).
    const size_t n = members.size();
    std::vector<std::string> after(n + 1), first(n + 1);
    after[n] = first[n] = "";
    for (size_t k = n; k-- > 0;) {
      const std::string with =
          "\",\" ws " + members[k].pair + (after[k + 1].empty() ? "" : " " + after[k + 1]);
      const std::string lead = members[k].pair + (after[k + 1].empty() ? "" : " " + after[k + 1]);
      std::string rest_after =
          members[k].required
              ? with
              : "(" + with + (after[k + 1].empty() ? " | " : " | " + after[k + 1]) + ")";
      std::string rest_first =
          members[k].required
              ? lead
              : "(" + lead + (first[k + 1].empty() ? " | " : " | " + first[k + 1]) + ")";
      after[k] = NewRule(hint + "-after");
      rules_[after[k]] = rest_after;
      first[k] = NewRule(hint + "-first");
      rules_[first[k]] = rest_first;
    }
    return Define(hint, "\"{\" ws " + (n == 0 ? std::string() : first[0] + " ") + "\"}\" ws");
  }

  Result<std::string> Array(const json& schema, const std::string& hint) {
    if (schema.contains("prefixItems")) {
      if (schema.contains("minItems") || schema.contains("maxItems")) {
        return Status::Error(
            "json_schema: 'prefixItems' with 'minItems' or 'maxItems' is not supported");
      }
      std::string body = "\"[\" ws";
      for (size_t i = 0; i < schema["prefixItems"].size(); ++i) {
        auto item = Visit(schema["prefixItems"][i], fmt::format("{}-{}", hint, i));
        if (!item.ok()) return item;
        body += (i == 0 ? " " : " \",\" ws ") + *item;
      }
      return Define(hint, body + " \"]\" ws");
    }
    std::string item = "value";
    if (schema.contains("items")) {
      auto visited = Visit(schema["items"], hint + "-item");
      if (!visited.ok()) return visited;
      item = *visited;
    }
    auto min = Count(schema, "minItems", 0);
    auto max = Count(schema, "maxItems", -1);
    if (!min.ok()) return min.status();
    if (!max.ok()) return max.status();
    if (*max >= 0 && *max < *min)
      return Status::Error("json_schema: 'maxItems' is below 'minItems'");
    if (*max == 0) return Define(hint, std::string("\"[\" ws \"]\" ws"));
    const std::string more =
        Repeat("\",\" ws " + item, *min > 0 ? *min - 1 : 0, *max < 0 ? -1 : *max - 1);
    const std::string items = item + " " + more;
    return Define(hint, "\"[\" ws " + (*min > 0 ? items : "(" + items + ")?") + " \"]\" ws");
  }

  Result<std::string> String(const json& schema, const std::string& hint) {
    auto min = Count(schema, "minLength", 0);
    auto max = Count(schema, "maxLength", -1);
    if (!min.ok()) return min.status();
    if (!max.ok()) return max.status();
    if (*max >= 0 && *max < *min)
      return Status::Error("json_schema: 'maxLength' is below 'minLength'");
    if (*min == 0 && *max < 0) return std::string("string");
    return Define(hint, "\"\\\"\" " + Repeat("char", *min, *max) + " \"\\\"\" ws");
  }

  static Result<int64_t> Count(const json& schema, const char* key, int64_t absent) {
    if (!schema.contains(key)) return absent;
    const json& v = schema[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 10000) {
      return Status::Error(
          fmt::format("json_schema: '{}' must be a whole number from 0 to 10000", key));
    }
    return v.get<int64_t>();
  }

  const json& root_;
  std::map<std::string, std::string> rules_;
  std::map<std::string, std::string> refs_;
};

}  // namespace

Result<std::string> JsonSchemaToGbnf(const nlohmann::json& schema) {
  return Converter(schema).Convert();
}

std::string JsonObjectGbnf() { return std::string("root ::= ws object\n") + kJsonRules; }

}  // namespace h2o
