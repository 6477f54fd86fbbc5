// Which ids end a generation: EOS, the file's EOT/EOM ids, and control
// tokens spelled as llama.cpp's end markers (hand-built vocabulary, and the
// real Llama 3 one, whose ids are published in its tokenizer_config.json).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_cases.h"

namespace h2o {
namespace {

Vocab MarkerVocab() {
  const std::vector<std::pair<std::string, TokenType>> tokens = {
      {"<s>", TokenType::kControl},              // 0
      {"</s>", TokenType::kControl},             // 1: EOS
      {"<|eot_id|>", TokenType::kControl},       // 2: an end marker
      {"<|end_of_text|>", TokenType::kControl},  // 3: an end marker
      {"<|im_end|>", TokenType::kNormal},        // 4: spelled like one, but plain text
      {"<|start|>", TokenType::kControl},        // 5: control, not an end
      {"<stop>", TokenType::kControl},           // 6: named by eot_token_id
      {"a", TokenType::kNormal},                 // 7
  };
  Vocab v;
  v.type = VocabType::kByteLevelBpe;
  v.pre = "gpt-2";
  for (const auto& [text, type] : tokens) {
    v.tokens.push_back(text);
    v.types.push_back(type);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  v.bos_id = 0;
  v.eos_id = 1;
  v.unk_id = -1;
  v.add_bos = false;
  return v;
}

TEST(EndOfGeneration, EosMarkersAndNamedIds) {
  Vocab v = MarkerVocab();
  v.eot_id = 6;
  const Tokenizer t(std::move(v));
  const bool want[] = {false, true, true, true, false, false, true, false};
  for (int32_t id = 0; id < 8; ++id) EXPECT_EQ(t.IsEndOfGeneration(id), want[id]) << id;
  EXPECT_FALSE(t.IsEndOfGeneration(-1));
  EXPECT_FALSE(t.IsEndOfGeneration(8));
}

TEST(EndOfGeneration, WithoutNamedIdsOnlyEosAndMarkers) {
  const Tokenizer t(MarkerVocab());
  EXPECT_FALSE(t.IsEndOfGeneration(6));
  EXPECT_TRUE(t.IsEndOfGeneration(2));
}

TEST(EndOfGeneration, OutOfRangeEotIsInvalid) {
  Vocab v = MarkerVocab();
  v.eot_id = 99;
  EXPECT_FALSE(ValidateVocab(v).ok());
}

// Llama 3: <|begin_of_text|> 128000, <|end_of_text|> 128001,
// <|start_header_id|> 128006, <|eom_id|> 128008, <|eot_id|> 128009 (EOS of
// this file).
TEST(EndOfGeneration, Llama3Vocabulary) {
  auto file = gguf::File::Open(testing::Llama3VocabPath());
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto t = LoadTokenizerFromGguf(**file);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->eos_id(), 128009);
  for (const int32_t id : {128001, 128008, 128009}) EXPECT_TRUE(t->IsEndOfGeneration(id)) << id;
  for (const int32_t id : {128000, 128006, 791}) EXPECT_FALSE(t->IsEndOfGeneration(id)) << id;
}

}  // namespace
}  // namespace h2o
