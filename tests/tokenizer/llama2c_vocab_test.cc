#include "tokenizer/llama2c_vocab.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace h2o {
namespace {

const std::string kTok512 = std::string(H2O_MODELS_DIR) + "/tok512.bin";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Writes `data` to a fresh file under the test temp dir; returns its path.
std::string WriteTemp(const std::string& name, const std::string& data) {
  const std::string path = (std::filesystem::path(testing::TempDir()) / name).string();
  std::ofstream(path, std::ios::binary) << data;
  return path;
}

TEST(Llama2cVocabTest, LoadsTok512InSentencePieceForm) {
  Result<Vocab> vocab = LoadLlama2cVocab(kTok512, 512);
  ASSERT_TRUE(vocab.ok()) << vocab.status().message();
  ASSERT_EQ(vocab->tokens.size(), 512u);
  EXPECT_EQ(vocab->tokens[0], "<unk>");
  EXPECT_EQ(vocab->tokens[1], "<s>");
  EXPECT_EQ(vocab->tokens[2], "</s>");
  EXPECT_EQ(vocab->tokens[3 + 0x0A], "<0x0A>");
  EXPECT_EQ(vocab->tokens[259], "\xE2\x96\x81t");  // "▁t"
  EXPECT_EQ(vocab->types[0], TokenType::kUnknown);
  EXPECT_EQ(vocab->types[1], TokenType::kControl);
  EXPECT_EQ(vocab->types[2], TokenType::kControl);
  EXPECT_EQ(vocab->types[3], TokenType::kByte);
  EXPECT_EQ(vocab->types[258], TokenType::kByte);
  EXPECT_EQ(vocab->types[259], TokenType::kNormal);
  EXPECT_EQ(vocab->scores[260], -1.0f);
  EXPECT_EQ(vocab->bos_id, 1);
  EXPECT_EQ(vocab->eos_id, 2);
  EXPECT_EQ(vocab->unk_id, 0);
}

TEST(Llama2cVocabTest, EveryTruncationIsAnError) {
  const std::string data = ReadAll(kTok512);
  ASSERT_EQ(data.size(), 6227u);
  for (size_t cut : {size_t{0}, size_t{3}, size_t{4}, size_t{11}, size_t{100}, data.size() - 1}) {
    const std::string path = WriteTemp("tok_cut.bin", data.substr(0, cut));
    Result<Vocab> vocab = LoadLlama2cVocab(path, 512);
    ASSERT_FALSE(vocab.ok()) << "cut at " << cut;
    EXPECT_NE(vocab.status().message().find(path), std::string::npos);
    const std::string message = vocab.status().message();
    EXPECT_TRUE(message.find("truncated") != std::string::npos ||
                message.find("too short") != std::string::npos)
        << message;
  }
}

TEST(Llama2cVocabTest, RejectsCorruptOrMismatchedFiles) {
  const std::string data = ReadAll(kTok512);
  EXPECT_FALSE(LoadLlama2cVocab(kTok512, 511).ok());  // bytes left over
  EXPECT_FALSE(LoadLlama2cVocab(kTok512, 513).ok());  // truncated
  EXPECT_FALSE(LoadLlama2cVocab(kTok512, 0).ok());
  EXPECT_FALSE(LoadLlama2cVocab(kTok512 + ".missing", 512).ok());

  std::string bad_length = data;
  const int32_t huge = 1 << 30;
  std::memcpy(bad_length.data() + 4 + 4, &huge, 4);  // length of token 0
  Result<Vocab> vocab = LoadLlama2cVocab(WriteTemp("tok_len.bin", bad_length), 512);
  ASSERT_FALSE(vocab.ok());
  EXPECT_NE(vocab.status().message().find("length"), std::string::npos);

  std::string negative = data;
  const int32_t minus_one = -1;
  std::memcpy(negative.data() + 4 + 4, &minus_one, 4);
  EXPECT_FALSE(LoadLlama2cVocab(WriteTemp("tok_neg.bin", negative), 512).ok());

  std::string bad_header = data;
  std::memcpy(bad_header.data(), &minus_one, 4);
  EXPECT_FALSE(LoadLlama2cVocab(WriteTemp("tok_hdr.bin", bad_header), 512).ok());
}

}  // namespace
}  // namespace h2o
