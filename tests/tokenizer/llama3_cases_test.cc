// The real Llama 3 vocabulary must reproduce the 473 reference cases of
// tests/data/tokenizers/llama3_cases.jsonl exactly (ids from llama.cpp and
// from an independent Python implementation), and decode back to the text.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_cases.h"

namespace h2o {
namespace {

using testing::Llama3VocabPath;
using testing::LoadLlama3Cases;
using testing::TokenizerCase;

class Llama3CasesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto file = gguf::File::Open(Llama3VocabPath());
    ASSERT_TRUE(file.ok()) << file.status().message();
    auto tokenizer = LoadTokenizerFromGguf(**file);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
    tokenizer_ = new Tokenizer(std::move(tokenizer).value());
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    tokenizer_ = nullptr;
  }
  static const Tokenizer* tokenizer_;
};

const Tokenizer* Llama3CasesTest::tokenizer_ = nullptr;

TEST_F(Llama3CasesTest, VocabularyIsReadAsLlama3) {
  const Vocab& v = tokenizer_->vocab();
  EXPECT_EQ(v.type, VocabType::kByteLevelBpe);
  EXPECT_EQ(v.pre, "llama-bpe");
  EXPECT_EQ(v.tokens.size(), 128256u);
  EXPECT_EQ(v.merges.size(), 279914u);
  EXPECT_EQ(v.bos_id, 128000);
  EXPECT_EQ(v.eos_id, 128009);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
}

TEST_F(Llama3CasesTest, ReproducesEveryCase) {
  const std::vector<TokenizerCase> cases = LoadLlama3Cases();
  ASSERT_EQ(cases.size(), 473u);
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<int32_t> ids = tokenizer_->Encode(cases[i].text, /*add_special=*/true);
    EXPECT_EQ(ids, cases[i].ids) << "case " << i << ": " << cases[i].text;
    failures += ids != cases[i].ids;
    if (failures > 10) break;
  }
}

TEST_F(Llama3CasesTest, DecodeGivesBackEveryText) {
  for (const TokenizerCase& c : LoadLlama3Cases()) {
    EXPECT_EQ(tokenizer_->Decode(c.ids, /*remove_special=*/true), c.text);
    const std::vector<int32_t> without_bos(c.ids.begin() + 1, c.ids.end());
    EXPECT_EQ(tokenizer_->Decode(without_bos, /*remove_special=*/false), c.text);
    EXPECT_EQ(tokenizer_->Encode(c.text, /*add_special=*/false), without_bos);
  }
}

TEST_F(Llama3CasesTest, DecodeIsExactOnEveryByteString) {
  for (int b = 0; b < 256; ++b) {
    const std::string text(1, static_cast<char>(b));
    EXPECT_EQ(tokenizer_->Decode(tokenizer_->Encode(text, false), false), text) << b;
  }
  // Random mixtures of ASCII, multi-byte characters, lone and stray UTF-8
  // bytes, and pieces of special tokens.
  const std::vector<std::string> atoms = {"a",
                                          "Z",
                                          " ",
                                          "  ",
                                          "\n",
                                          "\r\n",
                                          "\t",
                                          "'s",
                                          "'LL",
                                          "1",
                                          "234",
                                          ".",
                                          "!?",
                                          "<|",
                                          "|>",
                                          "<|eot_id|>",
                                          "<|begin_of_text|>",
                                          "\xC3\xA9",
                                          "\xE4\xB8\x96",
                                          "\xF0\x9F\x98\x80",
                                          "\xE2\x80\x8D",
                                          "\xC2\x85",
                                          "\xE3\x80\x80",
                                          "\xFF",
                                          "\x80",
                                          "\xC3",
                                          "\xE4\xB8",
                                          "\xED\xA0\x80",
                                          std::string(1, '\0')};
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    for (int n = rng() % 24; n > 0; --n) text += atoms[rng() % atoms.size()];
    const std::vector<int32_t> ids = tokenizer_->Encode(text, /*add_special=*/true);
    ASSERT_EQ(tokenizer_->Decode(ids, /*remove_special=*/true), text)
        << ::testing::PrintToString(text);
    std::string streamed;
    for (int32_t id : ids) {
      streamed += tokenizer_->vocab().types[id] == TokenType::kControl
                      ? tokenizer_->vocab().tokens[id]
                      : tokenizer_->TokenToPiece(id);
    }
    ASSERT_EQ(streamed, "<|begin_of_text|>" + text) << ::testing::PrintToString(text);
  }
}

}  // namespace
}  // namespace h2o
