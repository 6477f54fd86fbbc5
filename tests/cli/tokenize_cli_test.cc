// `h2o tokenize` on vocab-only GGUFs, with --jsonl and --no-bos, and the
// one-line errors for bad vocabularies and ill-formed UTF-8 input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "test_data.h"
#include "tokenizer/vocab_variant.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::JoinIds;
using testing::RunH2o;

const std::string kLlama3 = testing::DataPath("tokenizers/llama3-vocab.gguf");
const std::string kCases = testing::DataPath("tokenizers/llama3_cases.jsonl");

struct Case {
  std::string text;
  std::vector<int32_t> ids;  // BOS first
};

std::vector<Case> Llama3Cases() {
  std::ifstream in(kCases, std::ios::binary);
  std::vector<Case> cases;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    cases.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int32_t>>()});
  }
  return cases;
}

std::vector<std::vector<int32_t>> ParseIdLines(const std::string& out) {
  std::vector<std::vector<int32_t>> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line).get<std::vector<int32_t>>());
  }
  return lines;
}

class TokenizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("h2o_tokenize_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(TokenizeCli, VocabOnlyFileWithATextFile) {
  // Case 0 (a War and Peace paragraph) has no surrounding whitespace, which
  // -f would trim as a document boundary.
  const Case c = Llama3Cases().at(0);
  const auto r = RunH2o("tokenize -m " + kLlama3 + " -f " + Write("para.txt", c.text));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, JoinIds(c.ids) + "\n");
}

TEST_F(TokenizeCli, EndOfTextSplitsDocumentsEachWithItsBos) {
  // Three stories the independent SentencePiece tokenizer encoded one by
  // one: joined by <|endoftext|> (with the blank lines, empty documents and
  // a leading separator real dumps have), each is one line of its own ids.
  const nlohmann::json ref = testing::ReadJson("reference_tokens.json");
  std::string text = "<|endoftext|>\n";
  for (size_t i = 0; i < 3; ++i) {
    text += ref[i]["text"].get<std::string>() + (i == 1 ? "\n<|endoftext|>  <|endoftext|>\n\n" : "\n<|endoftext|>\n");
  }
  const std::string file = Write("docs.txt", text);
  const auto r = RunH2o("tokenize -m " + testing::ModelPath() + " -f " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string want;
  for (size_t i = 0; i < 3; ++i) want += JoinIds(ref[i]["ids"].get<std::vector<int32_t>>()) + "\n";
  EXPECT_EQ(r.out, want);

  // perplexity scores the same documents as separate streams: every token
  // after each BOS, nothing across a boundary.
  const auto p = RunH2o("perplexity -m " + testing::ModelPath() + " --json -f " + file);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto out = nlohmann::json::parse(p.out)["policies"][0];
  ASSERT_EQ(out["per_stream"].size(), 3u);
  size_t scored = 0;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out["per_stream"][i]["tokens"].get<size_t>(), ref[i]["ids"].size() - 1) << "document " << i;
    scored += ref[i]["ids"].size() - 1;
  }
  EXPECT_EQ(out["tokens"].get<size_t>(), scored);
}

TEST_F(TokenizeCli, PromptWithSpecialTokens) {
  const auto r = RunH2o("tokenize -m " + kLlama3 + " -p 'Hi<|eot_id|>'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "128000 13347 128009\n");  // llb tokenize gives the same
}

TEST_F(TokenizeCli, JsonlGivesEveryReferenceCase) {
  const std::vector<Case> cases = Llama3Cases();
  const auto r = RunH2o("tokenize -m " + kLlama3 + " --jsonl " + kCases);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = ParseIdLines(r.out);
  ASSERT_EQ(lines.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(lines[i], cases[i].ids) << "case " << i;
}

TEST_F(TokenizeCli, NoBosLeavesOutBos) {
  const std::vector<Case> cases = Llama3Cases();
  const auto r = RunH2o("tokenize -m " + kLlama3 + " --jsonl " + kCases + " --no-bos");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = ParseIdLines(r.out);
  ASSERT_EQ(lines.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(lines[i], std::vector<int32_t>(cases[i].ids.begin() + 1, cases[i].ids.end()));
  }
  const auto spm =
      RunH2o("tokenize -m " + testing::ModelPath() + " -p 'Once upon a time' --no-bos");
  ASSERT_EQ(spm.exit_code, 0) << spm.err;
  EXPECT_EQ(spm.out, "403 407 261 378\n");
}

TEST_F(TokenizeCli, UnknownPreTokenizerIsOneLineNamingItAndTheFile) {
  auto source = gguf::File::Open(kLlama3);
  ASSERT_TRUE(source.ok()) << source.status().message();
  const std::string path = Path("unknown_pre.gguf");
  ASSERT_TRUE(WriteVocabVariant(**source, {"no-such-pre", std::nullopt, std::nullopt}, path).ok());
  const auto r = RunH2o("tokenize -m " + path + " -p hello");
  ExpectOneErrorLine(r, path + ": unknown pre-tokenizer 'no-such-pre' (tokenizer.ggml.pre)");
}

TEST_F(TokenizeCli, VocabularyWithoutMergesIsOneLine) {
  gguf::Writer w;
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b"});
  const std::string path = Path("no_merges.gguf");
  ASSERT_TRUE(w.Write(path).ok());
  ExpectOneErrorLine(RunH2o("tokenize -m " + path + " -p ab"),
                     path + ": missing required key 'tokenizer.ggml.merges'");
}

TEST_F(TokenizeCli, InvalidUtf8IsOneLineWithItsOffset) {
  ExpectOneErrorLine(RunH2o("tokenize -m " + kLlama3 + " -p \"$(printf 'ab\\377')\""),
                     "--prompt: invalid UTF-8 at byte 2 (0xff)");
  const std::string text = Write("bad.txt", "caf\xC3\xA9 \xC3(");
  ExpectOneErrorLine(RunH2o("tokenize -m " + kLlama3 + " -f " + text),
                     text + ": invalid UTF-8 at byte 6 (0xc3)");
  const std::string jsonl = Write("bad.jsonl", "{\"text\": \"ok\"}\n{\"text\": \"a\xFF\"}\n");
  ExpectOneErrorLine(RunH2o("tokenize -m " + kLlama3 + " --jsonl " + jsonl),
                     jsonl + ":2: invalid UTF-8 at byte 11 (0xff)");
  ExpectOneErrorLine(
      RunH2o("generate -m " + testing::ModelPath() + " -n 1 -p \"$(printf 'x\\300\\200')\""),
      "--prompt: invalid UTF-8 at byte 1 (0xc0)");
  ExpectOneErrorLine(RunH2o("perplexity -m " + testing::ModelPath() + " -f " + text),
                     text + ": invalid UTF-8 at byte 6");
}

TEST_F(TokenizeCli, BadJsonlAndMissingInputAreOneLine) {
  const std::string no_text = Write("no_text.jsonl", "{\"prompt\": \"hi\"}\n");
  ExpectOneErrorLine(RunH2o("tokenize -m " + kLlama3 + " --jsonl " + no_text),
                     no_text + ":1: missing field 'text'");
  testing::ExpectUsageError(RunH2o("tokenize -m " + kLlama3),
                            "an input (-f FILE, -p TEXT or --jsonl FILE) is required");
  testing::ExpectUsageError(RunH2o("tokenize -m " + kLlama3 + " -p a --jsonl " + no_text),
                            "-p/--prompt and --jsonl cannot be used together");
}

}  // namespace
}  // namespace h2o
