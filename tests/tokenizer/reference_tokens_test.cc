// The bundled stories260K vocabulary must reproduce the reference ids of
// tests/data/reference_tokens.json (an independent SentencePiece-BPE
// implementation) exactly, whichever file the vocabulary is read from.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/llama2c_vocab.h"
#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

struct Story {
  std::string text;
  std::vector<int32_t> ids;
};

std::vector<Story> LoadStories() {
  std::ifstream in(std::string(H2O_TEST_DATA_DIR) + "/reference_tokens.json");
  EXPECT_TRUE(in.good()) << "missing tests/data/reference_tokens.json";
  const nlohmann::json json = nlohmann::json::parse(in);
  std::vector<Story> stories;
  for (const auto& entry : json) {
    stories.push_back({entry.at("text").get<std::string>(),
                       entry.at("ids").get<std::vector<int32_t>>()});
  }
  return stories;
}

Tokenizer Llama2cTokenizer() {
  Result<Vocab> vocab = LoadLlama2cVocab(std::string(H2O_MODELS_DIR) + "/tok512.bin", 512);
  H2O_CHECK(vocab.ok());
  return Tokenizer(std::move(vocab).value());
}

Tokenizer GgufTokenizer() {
  Result<std::unique_ptr<gguf::File>> file =
      gguf::File::Open(std::string(H2O_MODELS_DIR) + "/stories260K.gguf");
  H2O_CHECK(file.ok());
  Result<Vocab> vocab = LoadVocabFromGguf(*file.value());
  H2O_CHECK(vocab.ok());
  return Tokenizer(std::move(vocab).value());
}

void ExpectReproducesReference(const Tokenizer& tokenizer) {
  const std::vector<Story> stories = LoadStories();
  ASSERT_EQ(stories.size(), 56u);
  for (size_t i = 0; i < stories.size(); ++i) {
    EXPECT_EQ(tokenizer.Encode(stories[i].text, /*add_special=*/true), stories[i].ids)
        << "story " << i;
    EXPECT_EQ(tokenizer.Decode(stories[i].ids, /*remove_special=*/true), stories[i].text)
        << "story " << i;
  }
}

TEST(ReferenceTokensTest, Llama2cVocabReproducesReferenceIds) {
  ExpectReproducesReference(Llama2cTokenizer());
}

TEST(ReferenceTokensTest, GgufVocabReproducesReferenceIds) {
  ExpectReproducesReference(GgufTokenizer());
}

TEST(ReferenceTokensTest, RoundTripsHandCases) {
  const Tokenizer t = Llama2cTokenizer();
  const std::vector<std::string> cases = {
      "",  " ", "   ", " leading", "trailing ", "two  spaces   three", "line\nbreak\n\n",
      "\n", "tab\tand\r\n", "caf\xC3\xA9 \xE2\x98\x95", "\xF0\x9F\x98\x80!", "\xFF\xFE stray",
      "Once upon a time, there was a little girl named Lily.",
      // A lead byte without its continuation bytes once swallowed the space
      // after it, which decoded as "\u2581" (fuzz/tokenizer_fuzz.cc).
      "\x08\xF5\x08 *", "\xE2 x", "\xC3 ", "\xF0\x9F  "};
  for (const std::string& text : cases) {
    EXPECT_EQ(t.Decode(t.Encode(text, true), true), text) << "'" << text << "'";
    EXPECT_EQ(t.Decode(t.Encode(text, false), false), text) << "'" << text << "'";
  }
}

TEST(ReferenceTokensTest, NonAsciiUsesPiecesOrByteFallback) {
  const Tokenizer t = Llama2cTokenizer();
  // "é" is piece 485 of the 512-piece vocab; "☕" (E2 98 95) is not, so each
  // of its bytes becomes a byte token (ids 3..258 are <0x00>..<0xFF>).
  const std::vector<int32_t> ids = t.Encode("caf\xC3\xA9 \xE2\x98\x95", false);
  ASSERT_GE(ids.size(), 5u);
  EXPECT_EQ(std::vector<int32_t>(ids.end() - 5, ids.end()),
            (std::vector<int32_t>{485, 410, 3 + 0xE2, 3 + 0x98, 3 + 0x95}));
  EXPECT_EQ(t.TokenToPiece(3 + 0x0A), "\n");
  EXPECT_EQ(t.TokenToPiece(3 + 0xE2), "\xE2");
  EXPECT_EQ(t.TokenToPiece(410), " ");
  EXPECT_EQ(t.TokenToPiece(1), "");
  EXPECT_EQ(t.TokenToPiece(2), "");
}

TEST(ReferenceTokensTest, EncodesLongTextQuickly) {
  // Quadratic rescans would take minutes here; the heap takes milliseconds.
  const Tokenizer t = Llama2cTokenizer();
  std::string text;
  for (const Story& s : LoadStories()) text += s.text + "\n";
  while (text.size() < 1'000'000) text += text;
  const std::vector<int32_t> ids = t.Encode(text, true);
  EXPECT_GT(ids.size(), text.size() / 8);
  EXPECT_EQ(t.Decode(ids, /*remove_special=*/true), text);
}

}  // namespace
}  // namespace h2o
