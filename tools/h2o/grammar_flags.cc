// ResolveGrammar (cli_common.h): the output constraint that --grammar,
// --grammar-file, --json-schema and --json-schema-file ask for.
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "grammar/json_schema.h"

namespace h2o::cli {
namespace {

Result<std::string> SchemaGbnf(const std::string& text, const std::string& flag) {
  const nlohmann::json schema = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return Status::Error(flag + ": not JSON");
  auto gbnf = JsonSchemaToGbnf(schema);
  if (!gbnf.ok()) return gbnf.status().WithContext(flag);
  return gbnf;
}

}  // namespace

Result<std::shared_ptr<const Grammar>> ResolveGrammar(const SamplingFlags& f) {
  std::string flag;
  Result<std::string> gbnf = std::string();
  if (!f.grammar.empty()) {
    flag = "--grammar";
    gbnf = f.grammar;
  } else if (!f.grammar_file.empty()) {
    flag = "--grammar-file";
    gbnf = ReadTextFile(f.grammar_file);
  } else if (!f.json_schema.empty()) {
    flag = "--json-schema";
    gbnf = SchemaGbnf(f.json_schema, flag);
  } else if (!f.json_schema_file.empty()) {
    flag = "--json-schema-file";
    auto text = ReadTextFile(f.json_schema_file);
    gbnf = text.ok() ? SchemaGbnf(*text, flag + " " + f.json_schema_file) : text;
  } else {
    return std::shared_ptr<const Grammar>();
  }
  if (!gbnf.ok()) return gbnf.status();
  auto grammar = ParseGbnf(*gbnf);
  if (!grammar.ok()) return grammar.status().WithContext(flag);
  return std::make_shared<const Grammar>(std::move(grammar).value());
}

}  // namespace h2o::cli
