// llama.cpp's flags and habits on `h2o` (issue 14 item 2): each alias gives
// what the flag it stands for gives, on the bundled model, compared run
// against run; new errors are checked word for word.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
using testing::RunH2o;
using testing::RunResult;

const std::string kModel = testing::ModelPath();
const std::string kGreedy = "generate -m " + kModel + " -n 24 --temp 0 -q ";

class LlamaFlagsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("h2o_llama_flags_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out << text;
    return path;
  }
  std::filesystem::path dir_;
};

RunResult Ok(const std::string& args, const std::string& stdin_path = "/dev/null") {
  RunResult r = RunH2o(args, stdin_path);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return r;
}

// The seed a run printed: "seed: N (repeat with -s N)".
std::string PrintedSeed(const RunResult& r) {
  std::smatch m;
  const std::regex line("seed: ([0-9]+) \\(repeat with -s \\1\\)");
  return std::regex_search(r.err, m, line) ? m[1].str() : "";
}

TEST(LlamaFlags, DefaultSeedIsRandomPrintedAndRepeatableWithS) {
  const std::string sample = "generate -m " + kModel + " -p 'Once upon' -n 24 --temp 1.5 ";
  const RunResult a = Ok(sample);
  const RunResult b = Ok(sample);
  const std::string seed_a = PrintedSeed(a), seed_b = PrintedSeed(b);
  ASSERT_FALSE(seed_a.empty()) << a.err;
  ASSERT_FALSE(seed_b.empty()) << b.err;
  EXPECT_NE(seed_a, seed_b);  // two 32-bit draws: equal once in 4 billion
  // -s with the printed seed repeats the run, and prints no seed.
  const RunResult again = Ok(sample + "-s " + seed_a);
  EXPECT_EQ(again.out, a.out);
  EXPECT_EQ(PrintedSeed(again), "");
  EXPECT_EQ(Ok(sample + "--seed " + seed_b).out, b.out);
  // Greedy draws nothing: no seed to print.
  EXPECT_EQ(PrintedSeed(Ok("generate -m " + kModel + " -p 'Once upon' -n 4 --temp 0")), "");
}

TEST_F(LlamaFlagsFiles, PromptFromAFileAndFromStandardInput) {
  const std::string expected = Ok(kGreedy + "-p 'Once upon a time'").out;
  ASSERT_NE(expected.find("Once upon a time"), std::string::npos);
  const std::string path = Write("prompt.txt", "Once upon a time");
  EXPECT_EQ(Ok(kGreedy + "-f " + path).out, expected);
  EXPECT_EQ(Ok(kGreedy + "-f -", path).out, expected);
  EXPECT_EQ(Ok("generate -m " + kModel + " -n 24 --temp 0 -q --file -", path).out, expected);
  ExpectOneErrorLine(RunH2o(kGreedy + "-f " + (dir_ / "missing.txt").string()),
                     "missing.txt: cannot open file");
  ExpectUsageError(RunH2o(kGreedy + "-f " + path + " -p hi"),
                   "h2o: error: -p/--prompt and -f/--file cannot be used together");
}

TEST(LlamaFlags, VersionNamesCommitCompilerAndKernels) {
  const RunResult r = Ok("--version");
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(
          "^h2o\\.cpp [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]{12}(-dirty)?|"
          "unknown)\\)\ncompiler: (GCC|clang) [0-9.]+\nSIMD kernels: [a-z0-9]+ "
          "\\(available: [a-z0-9, ]*ref\\)\nmatrix kernels:\n(  [a-z0-9_K, ]+: [^\n]+\n)+$")))
      << r.out;
}

TEST(LlamaFlags, CacheTypeAliasesAreTheKvType) {
  const std::string f32 = Ok(kGreedy + "-p 'Once upon' --kv-type f32 --print-ids").out;
  EXPECT_EQ(Ok(kGreedy + "-p 'Once upon' -ctk f32 -ctv f32 --print-ids").out, f32);
  EXPECT_EQ(Ok(kGreedy + "-p 'Once upon' -ctk=f32 --cache-type-v=f32 --print-ids").out, f32);
  // K and V may differ; only -ctk given: V keeps --kv-type's f16.
  const std::string loud = "generate -m " + kModel + " -n 4 --temp 0 -p hi ";
  EXPECT_NE(Ok(loud + "-ctk f32 -ctv f16").err.find(", K f32, V f16): "), std::string::npos);
  EXPECT_NE(Ok(loud + "-ctk f32").err.find(", K f32, V f16): "), std::string::npos);
  EXPECT_NE(Ok(loud + "--kv-type bf16 -ctv f32").err.find(", K bf16, V f32): "), std::string::npos);
  ExpectUsageError(RunH2o(kGreedy + "-p hi -ctk q9"),
                   "h2o: error: --kv-type-k/--cache-type-k: 'q9' is not allowed (one of: "
                   "f32,f16,bf16,q8_0,q4_0,q4_1,q5_0,q5_1)");
  ExpectUsageError(RunH2o(kGreedy + "-p hi --kv-type q8_1"),
                   "h2o: error: --kv-type: 'q8_1' is not allowed (one of: "
                   "f32,f16,bf16,q8_0,q4_0,q4_1,q5_0,q5_1)");
}

TEST(LlamaFlags, BatchSizeIsTheChunk) {
  const std::string stream = testing::DataPath("stories260K/streams/s001.txt");
  const std::string base = "perplexity -m " + kModel + " --token-file " + stream +
                           " --kv h2o:heavy=8,recent=8 --json -q ";
  const std::string chunk = Ok(base + "--chunk 4").out;
  ASSERT_NE(chunk.find("\"nll_sum\""), std::string::npos) << chunk;
  EXPECT_EQ(Ok(base + "-b 4").out, chunk);
  EXPECT_EQ(Ok(base + "--batch-size 4").out, chunk);
  EXPECT_NE(Ok(base + "-b 64").out, chunk);  // the chunk matters to an evicting cache
}

TEST(LlamaFlags, ReversePromptStopsAfterTheTextAppears) {
  const std::string whole = Ok(kGreedy + "-p 'Once upon'").out;
  const size_t at = whole.find("little");
  ASSERT_NE(at, std::string::npos) << whole;
  const std::string cut = Ok(kGreedy + "-p 'Once upon' -r little -r 'never appears'").out;
  // Streaming stops with the token that completed the stop text.
  EXPECT_EQ(whole.compare(0, cut.size() - 1, cut, 0, cut.size() - 1), 0) << cut;
  EXPECT_NE(cut.find("little"), std::string::npos);
  EXPECT_LT(cut.size(), at + 12);
  EXPECT_GT(cut.size(), at);
}

TEST(LlamaFlags, NoDisplayPromptPrintsOnlyTheGeneratedPart) {
  const std::string whole = Ok(kGreedy + "-p 'Once upon'").out;
  const std::string generated = Ok(kGreedy + "-p 'Once upon' --no-display-prompt").out;
  ASSERT_EQ(whole.rfind("Once upon", 0), 0u);
  EXPECT_EQ(generated, whole.substr(std::string("Once upon").size()));
  const std::string ids = Ok(kGreedy + "-p 'Once upon' --no-display-prompt --print-ids").out;
  const std::string all = Ok(kGreedy + "-p 'Once upon' --print-ids").out;
  EXPECT_EQ(all.rfind("1 403 407 ", 0), 0u) << all;  // BOS, Once, upon
  EXPECT_EQ(ids, all.substr(std::string("1 403 407 ").size()));
}

TEST(LlamaFlags, RepeatPenaltyAndMinPChangeGreedyOrNot) {
  const std::string plain = Ok(kGreedy + "-p 'Once upon' --print-ids").out;
  // Greedy ignores min-p (the top token always passes it) ...
  EXPECT_EQ(Ok(kGreedy + "-p 'Once upon' --print-ids --min-p 0.9").out, plain);
  EXPECT_EQ(Ok(kGreedy + "-p 'Once upon' --print-ids --repeat-penalty 1").out, plain);
  // ... but not the repeat penalty: the bundled story model repeats
  // "Lily" and "the" within 24 tokens; penalized, it must pick others.
  EXPECT_NE(Ok(kGreedy + "-p 'Once upon' --print-ids --repeat-penalty 3").out, plain);
  ExpectUsageError(RunH2o(kGreedy + "-p hi --min-p 2"),
                   "h2o: error: --min-p: 2 is not allowed (0 to 1)");
  ExpectUsageError(RunH2o(kGreedy + "-p hi --repeat-penalty 0"),
                   "h2o: error: --repeat-penalty: 0 is not allowed (more than 0)");
}

TEST(LlamaFlags, QuietAndLogDisableOnEveryCommand) {
  const std::string loud = RunH2o(kGreedy.substr(0, kGreedy.size() - 3) + "-p hi").err;
  EXPECT_NE(loud.find("KV cache"), std::string::npos) << loud;
  for (const char* quiet : {"-q", "--quiet", "--log-disable"}) {
    const RunResult r = Ok("generate -m " + kModel + " -n 4 -p hi " + quiet);
    EXPECT_EQ(r.err, "") << quiet;
    EXPECT_FALSE(r.out.empty());
  }
  const std::string stream = testing::DataPath("stories260K/streams/s001.txt");
  const std::vector<std::string> commands = {
      "perplexity -m " + kModel + " --token-file " + stream,
      "tokenize -m " + kModel + " -p hi",
      "inspect " + kModel,
      "bench -m " + kModel + " -p 4 -n 0 -r 1",
      "analyze -m " + kModel + " --token-file " + stream + " --json --out " +
          (std::filesystem::temp_directory_path() /
           ("h2o_llama_flags_analyze_" + std::to_string(::getpid())))
              .string(),
  };
  for (const std::string& command : commands) {
    const RunResult r = Ok(command + " -q");
    EXPECT_EQ(r.err, "") << command;
    EXPECT_FALSE(r.out.empty()) << command;
  }
  std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                              ("h2o_llama_flags_analyze_" + std::to_string(::getpid())));
  for (const char* command : {"eval", "serve", "chat", "convert", "mkmodel"}) {
    EXPECT_NE(Ok(std::string(command) + " --help").out.find("-q, --quiet"), std::string::npos)
        << command;
  }
}

TEST(LlamaFlags, TokenizeShowPieces) {
  const std::string ids = Ok("tokenize -m " + kModel + " -p 'Once upon a time'").out;
  EXPECT_EQ(ids, "1 403 407 261 378\n");
  EXPECT_EQ(Ok("tokenize -m " + kModel + " -p 'Once upon a time' --show-pieces").out,
            "     1 -> '<s>'\n   403 -> ' Once'\n   407 -> ' upon'\n   261 -> ' a'\n"
            "   378 -> ' time'\n");
  ExpectUsageError(RunH2o("tokenize -m " + kModel + " --jsonl x.jsonl --show-pieces"),
                   "--show-pieces");
}

TEST(LlamaFlags, ModelFlagOnInspectAndConvert) {
  EXPECT_EQ(Ok("inspect -m " + kModel).out, Ok("inspect " + kModel).out);
  EXPECT_EQ(Ok("inspect --model " + kModel).out, Ok("inspect " + kModel).out);
}

TEST_F(LlamaFlagsFiles, ConvertTakesMAndWarnsWithoutATokenizer) {
  const std::string out = (dir_ / "s.gguf").string();
  const RunResult r = Ok("convert llama2c -m " + std::string(H2O_MODELS_DIR) +
                         "/stories260K.bin -o " + out);
  EXPECT_NE(r.err.find("h2o: warning: no --tokenizer: the GGUF has no vocabulary"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("wrote " + out), std::string::npos) << r.err;
  // A vocabulary-less model prints ids, with a warning, instead of nothing.
  const RunResult gen = Ok("generate -m " + out + " --tokens '1 403 407' -n 4 --temp 0 -q");
  EXPECT_EQ(gen.out.rfind("1 403 407 ", 0), 0u) << gen.out;
  EXPECT_EQ(gen.err, "h2o: warning: the model has no vocabulary: printing token ids, not text\n");
  // The same ids as the model with its vocabulary.
  EXPECT_EQ(gen.out, Ok(kGreedy.substr(0, kGreedy.find("-n")) +
                        "--tokens '1 403 407' -n 4 --temp 0 -q --print-ids")
                         .out);
  ExpectOneErrorLine(RunH2o("generate -m " + out + " --tokens '1 403' -n 4 -r x -q"),
                     "-r/--reverse-prompt needs a model with a vocabulary");
}

TEST(LlamaFlags, GenerateConversationIsChat) {
  // Standard input at its end: the chat prints its prompt and ends (exit 0).
  const RunResult r = Ok("generate -m " + kModel +
                         " -cnv -p 'You are kind.' --chat-template chatml -n 4");
  EXPECT_NE(r.err.find("h2o chat (chatml template)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.rfind("> ", 0), 0u) << r.out;
  // -cnv is only a generate (and chat) habit.
  ExpectUsageError(RunH2o("tokenize -m " + kModel + " -p hi -cnv"), "--conversation");
}

// GPU, memory-locking and micro-batch flags run as without them, each
// named in one warning with its value; its value is not read as anything
// else ("-ngl 99" is not "-n gl").
TEST(LlamaFlags, FlagsThatDoNotApplyAreIgnoredWithAWarning) {
  const std::string expected = Ok(kGreedy + "-p 'Once upon a time'").out;
  const RunResult r = Ok(kGreedy + "-p 'Once upon a time' -ngl 99 -fa on -ub 512 --mlock "
                                   "--no-mmap -sm none --n-gpu-layers=20 -fa -nkvo -tb 2 --jinja");
  EXPECT_EQ(r.out, expected);
  const std::vector<std::string> warned = {"-ngl 99", "-fa on", "-ub 512", "--mlock", "--no-mmap",
                                           "-sm none", "--n-gpu-layers=20", "-fa", "-nkvo",
                                           "-tb 2", "--jinja"};
  std::istringstream lines(r.err);
  std::string line;
  for (const std::string& flag : warned) {
    ASSERT_TRUE(std::getline(lines, line)) << r.err;
    EXPECT_EQ(line.rfind("h2o: warning: " + flag + " ignored: ", 0), 0u) << line;
    EXPECT_NE(line.find("(a llama.cpp flag)"), std::string::npos) << line;
  }
  EXPECT_FALSE(std::getline(lines, line)) << r.err;
  EXPECT_NE(r.err.find("-ngl 99 ignored: h2o runs on the CPU"), std::string::npos) << r.err;
  // A bare -fa before another flag takes no value from it.
  EXPECT_EQ(Ok(kGreedy + "-fa -p 'Once upon a time'").out, expected);
  // -np is the server's --parallel.
  const RunResult np = RunH2o("serve -m " + kModel + " -np x");
  EXPECT_NE(np.err.find("--parallel"), std::string::npos) << np.err;
}

// -f - reads standard input in every command that reads a text file.
TEST_F(LlamaFlagsFiles, DashFileIsStandardInputEverywhere) {
  const std::string path = Write("text.txt", "Once upon a time there was a cat.");
  const std::string tokenize = "tokenize -m " + kModel + " ";
  EXPECT_EQ(Ok(tokenize + "-f -", path).out, Ok(tokenize + "-f " + path).out);
  const std::string ppl = "perplexity -m " + kModel + " --json ";
  const auto from_stdin = nlohmann::json::parse(Ok(ppl + "-f -", path).out)["policies"][0];
  const auto from_file = nlohmann::json::parse(Ok(ppl + "-f " + path).out)["policies"][0];
  EXPECT_EQ(from_stdin["tokens"], from_file["tokens"]);
  EXPECT_EQ(from_stdin["nll_sum"], from_file["nll_sum"]);
  // --report is perplexity's report flag, as eval's; --out stays its alias.
  const std::string report = (dir_ / "ppl").string();
  Ok(ppl + "-f " + path + " --report " + report);
  EXPECT_TRUE(std::filesystem::exists(report + ".json"));
  Ok(ppl + "-f " + path + " --out " + report + "2");
  EXPECT_TRUE(std::filesystem::exists(report + "2.json"));
}

}  // namespace
}  // namespace h2o
