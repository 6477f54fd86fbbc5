// --grammar, --grammar-file, -j/--json-schema and -jf as a user types
// them: the output follows them, and a broken one is one error line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
using testing::RunH2o;

const std::string kGenerate = "generate -m " + testing::ModelPath() +
                              " -p 'Once upon a time' -q --no-display-prompt --temp 1 -s 7 ";

TEST(GrammarCli, JsonSchemaOutputIsValid) {
  const auto r = RunH2o(kGenerate +
                        "-n 200 -j '{\"type\": \"object\", \"properties\": "
                        "{\"n\": {\"type\": \"integer\"}}, \"required\": [\"n\"]}'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(v.is_object()) << r.out;
  EXPECT_EQ(v.size(), 1u) << r.out;
  EXPECT_TRUE(v["n"].is_number_integer()) << r.out;
}

TEST(GrammarCli, GrammarFileAndLlamaCppsSchemaFileFlag) {
  const std::string dir = ::testing::TempDir();
  const std::string gbnf = dir + "h2o_grammar_cli_" + std::to_string(::getpid()) + ".gbnf";
  const std::string schema = dir + "h2o_grammar_cli_" + std::to_string(::getpid()) + ".json";
  std::ofstream(gbnf) << "root ::= answer \".\"\nanswer ::= \" yes\" | \" no\"\n";
  std::ofstream(schema) << R"({"enum": ["up", "down"]})";
  const auto g = RunH2o(kGenerate + "-n 20 --grammar-file " + gbnf);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_TRUE(g.out == " yes.\n" || g.out == " no.\n") << g.out;  // generate ends with a newline
  const auto j = RunH2o(kGenerate + "-n 20 -jf " + schema);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto v = nlohmann::json::parse(j.out, nullptr, false);
  EXPECT_TRUE(v == "up" || v == "down") << j.out;
  std::remove(gbnf.c_str());
  std::remove(schema.c_str());
}

TEST(GrammarCli, BrokenConstraintsAreOneErrorLine) {
  ExpectOneErrorLine(RunH2o(kGenerate + "--grammar 'root ::= item'"),
                     "--grammar: grammar: rule 'item' is used but never defined");
  ExpectOneErrorLine(RunH2o(kGenerate + "-j '{\"type\": '"), "--json-schema: not JSON");
  ExpectOneErrorLine(RunH2o(kGenerate + "-j '{\"type\": \"string\", \"pattern\": \"a\"}'"),
                     "--json-schema: json_schema: 'pattern' is not supported");
  ExpectOneErrorLine(RunH2o(kGenerate + "--grammar-file /nonexistent.gbnf"), "/nonexistent.gbnf");
  ExpectUsageError(RunH2o(kGenerate + "--grammar 'root ::= \"a\"' -j '{}'"),
                   "cannot be used together");
}

}  // namespace
}  // namespace h2o
