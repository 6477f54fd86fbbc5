// CLI11's parse errors and help in h2o's words: one line naming the flag,
// what it got and what it takes; usage errors exit 2, runtime errors 1.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectUsageError;
using testing::RunH2o;

const std::string kModel = testing::ModelPath();
const std::string kGenerate = "generate -m " + kModel + " -p hi ";

TEST(CliUsageErrors, OutOfRangeNamesTheFlagWhatItGotAndWhatItTakes) {
  ExpectUsageError(RunH2o(kGenerate + "-n -5"),
                   "h2o: error: -n/--n-predict: -5 is not allowed (-1 or more) "
                   "(see 'h2o generate --help')");
  ExpectUsageError(RunH2o(kGenerate + "--top-p 2"),
                   "h2o: error: --top-p: 2 is not allowed (0 to 1) (see 'h2o generate --help')");
  ExpectUsageError(RunH2o("inspect -m " + kModel + " --chunk 0"),
                   "h2o: error: --chunk: 0 is not allowed (more than 0) "
                   "(see 'h2o inspect --help')");
  ExpectUsageError(RunH2o("convert pytorch a.bin -o b.gguf"),
                   "h2o: error: format: 'pytorch' is not allowed (one of: llama2c) "
                   "(see 'h2o convert --help')");
}

TEST(CliUsageErrors, NotANumber) {
  ExpectUsageError(RunH2o(kGenerate + "-n abc"),
                   "h2o: error: -n/--n-predict: 'abc' is not a whole number "
                   "(see 'h2o generate --help')");
  ExpectUsageError(RunH2o(kGenerate + "-n 1.5"),
                   "h2o: error: -n/--n-predict: '1.5' is not a whole number "
                   "(see 'h2o generate --help')");
  ExpectUsageError(RunH2o(kGenerate + "-n"),
                   "h2o: error: -n/--n-predict: missing its value (a whole number, -1 or more) "
                   "(see 'h2o generate --help')");
}

TEST(CliUsageErrors, UnknownOptionInTheOrderGiven) {
  ExpectUsageError(RunH2o(kGenerate + "-x 3"),
                   "h2o: error: unknown option '-x' (not understood: -x 3) "
                   "(see 'h2o generate --help')");
  ExpectUsageError(RunH2o(kGenerate + "--colour"),
                   "h2o: error: unknown option '--colour' (see 'h2o generate --help')");
}

TEST(CliUsageErrors, RequiredAndExcludedOptions) {
  ExpectUsageError(RunH2o("generate -p hi"),
                   "h2o: error: -m/--model is required (see 'h2o generate --help')");
  ExpectUsageError(RunH2o(kGenerate + "--tokens 1"),
                   "h2o: error: -p/--prompt and --tokens cannot be used together "
                   "(see 'h2o generate --help')");
  ExpectUsageError(RunH2o("tokenize -m " + kModel),
                   "h2o: error: an input (-f FILE, -p TEXT or --jsonl FILE) is required "
                   "(see 'h2o tokenize --help')");
  ExpectUsageError(RunH2o("tokenize -m " + kModel + " -p a -f b"),
                   "h2o: error: -f/--file and -p/--prompt cannot be used together "
                   "(see 'h2o tokenize --help')");
}

TEST(CliUsageErrors, GenerateTakesOnePolicy) {
  ExpectUsageError(RunH2o(kGenerate + "--kv full,h2o:heavy=8,recent=8"),
                   "h2o: error: --kv: 'full,h2o:heavy=8,recent=8' is a list of 2 policies; "
                   "generate takes one (a list is for perplexity, eval and bench) "
                   "(see 'h2o generate --help')");
}

TEST(CliUsageErrors, UnknownCommand) {
  ExpectUsageError(RunH2o("fly -m x"), "h2o: error: unknown command 'fly'");
}

// A runtime error (a file that is not there) exits 1.
TEST(CliUsageErrors, RuntimeErrorsExitOne) {
  const auto r = RunH2o("generate -m /nonexistent/model.gguf -p hi");
  EXPECT_EQ(r.exit_code, 1);
  testing::ExpectOneErrorLine(r, "/nonexistent/model.gguf");
}

// `h2o` alone: the usage, on stderr, exit 2.
TEST(CliUsageErrors, NoCommandPrintsUsage) {
  const auto r = RunH2o("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("Usage: h2o [OPTIONS] SUBCOMMAND"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("generate"), std::string::npos) << r.err;
}

TEST(CliHelp, ReadableTypesDefaultsAndFlags) {
  const auto g = RunH2o("generate --help");
  ASSERT_EQ(g.exit_code, 0);
  EXPECT_NE(g.out.find("-n, --n-predict INT (-1 or more)"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("past it, stops there) (default: 128)"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("--top-p NUMBER (0 to 1)"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("e.g. \"1 403 407\"; not with -p/--prompt, -f/--file\n"), std::string::npos)
      << g.out;
  const auto p = RunH2o("perplexity --help");
  ASSERT_EQ(p.exit_code, 0);
  EXPECT_NE(p.out.find("--kl, --no-kl "), std::string::npos) << p.out;
  const auto b = RunH2o("bench --help");
  ASSERT_EQ(b.exit_code, 0);
  EXPECT_NE(b.out.find("(default: 512)"), std::string::npos) << b.out;
  const auto t = RunH2o("tokenize --help");
  ASSERT_EQ(t.exit_code, 0);
  for (const auto* out : {&g.out, &p.out, &b.out, &t.out}) {
    for (const char* raw : {"{false}", "=[", "Exactly", "NONNEGATIVE", "Excludes:"}) {
      EXPECT_EQ(out->find(raw), std::string::npos) << raw << " in\n" << *out;
    }
  }
}

}  // namespace
}  // namespace h2o

namespace h2o {
namespace {

// Bad values caught while parsing are usage errors (exit 2) on every
// command, before any model loads (the model path here does not exist).
TEST(CliUsageErrors, BadKvSpecsAndPortsExitTwoBeforeLoading) {
  const std::string m = "-m /nonexistent.gguf ";
  testing::ExpectUsageError(
      testing::RunH2o("generate " + m + "-p hi --kv bogus"),
      "h2o: error: --kv: unknown KV policy 'bogus' (expected one of: full, local, sink, h2o, "
      "h2only, tova, random, snapkv) (see 'h2o generate --help')");
  testing::ExpectUsageError(testing::RunH2o("perplexity " + m + "--token-file x --kv full,bogus:k=1"),
                            "--kv: unknown KV policy 'bogus'");
  testing::ExpectUsageError(
      testing::RunH2o("perplexity " + m + "--token-file x --kv h2o --budget 10%,abc"),
      "h2o: error: --budget: bad budget 'abc'");
  testing::ExpectUsageError(testing::RunH2o("eval " + m + "--task x --kv h2o:heavy=1"),
                            "h2o: error: --kv: missing key 'recent' for policy 'h2o' "
                            "(see 'h2o eval --help')");
  testing::ExpectUsageError(testing::RunH2o("inspect /nonexistent.gguf --kv h2o:recent=4"),
                            "--kv: missing key 'heavy' for policy 'h2o'");
  testing::ExpectUsageError(testing::RunH2o("chat " + m + "--kv full,local:recent=4"),
                            "'full,local:recent=4' is a list of 2 policies; chat takes one");
  testing::ExpectUsageError(testing::RunH2o("serve " + m + "--port 70000"),
                            "h2o: error: --port: 70000 is not allowed (0 to 65535) "
                            "(see 'h2o serve --help')");
}

}  // namespace
}  // namespace h2o
