#include "tokenizer/gguf_vocab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "tokenizer/llama2c_vocab.h"
#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

const std::string kGguf = std::string(H2O_MODELS_DIR) + "/stories260K.gguf";

Result<Vocab> LoadFromPath(const std::string& path) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<gguf::File> file, gguf::File::Open(path));
  return LoadVocabFromGguf(*file);
}

// A vocab-only GGUF with a valid 5-token llama vocabulary; tests then break
// one field.
gguf::Writer ToyWriter() {
  gguf::Writer w;
  w.SetString("general.architecture", "llama");
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a"});
  w.SetF32Array("tokenizer.ggml.scores", {0, 0, 0, -1, -2});
  w.SetI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1});
  return w;
}

Result<Vocab> WriteAndLoad(const gguf::Writer& w, const std::string& name) {
  const std::string path = (std::filesystem::path(testing::TempDir()) / name).string();
  H2O_RETURN_IF_ERROR(w.Write(path));
  return LoadFromPath(path);
}

TEST(GgufVocabTest, Stories260KMatchesTheLlama2cExport) {
  Result<Vocab> from_gguf = LoadFromPath(kGguf);
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.status().message();
  Result<Vocab> from_bin = LoadLlama2cVocab(std::string(H2O_MODELS_DIR) + "/tok512.bin", 512);
  ASSERT_TRUE(from_bin.ok()) << from_bin.status().message();
  EXPECT_EQ(from_gguf->tokens, from_bin->tokens);
  EXPECT_EQ(from_gguf->scores, from_bin->scores);
  EXPECT_EQ(from_gguf->types, from_bin->types);
  EXPECT_EQ(from_gguf->bos_id, 1);
  EXPECT_EQ(from_gguf->eos_id, 2);
  EXPECT_EQ(from_gguf->unk_id, 0);
  EXPECT_TRUE(from_gguf->add_bos);
  EXPECT_TRUE(from_gguf->add_space_prefix);
}

TEST(GgufVocabTest, ReadsFlagsAndIds) {
  gguf::Writer w = ToyWriter();
  w.SetU32("tokenizer.ggml.bos_token_id", 4);
  w.SetU32("tokenizer.ggml.eos_token_id", 3);
  w.SetU32("tokenizer.ggml.unknown_token_id", 2);
  w.SetBool("tokenizer.ggml.add_bos_token", false);
  w.SetBool("tokenizer.ggml.add_space_prefix", false);
  Result<Vocab> v = WriteAndLoad(w, "flags.gguf");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->bos_id, 4);
  EXPECT_EQ(v->eos_id, 3);
  EXPECT_EQ(v->unk_id, 2);
  EXPECT_FALSE(v->add_bos);
  EXPECT_FALSE(v->add_space_prefix);
  EXPECT_EQ(v->scores, (std::vector<float>{0, 0, 0, -1, -2}));
  EXPECT_EQ(v->types[0], TokenType::kUnknown);
}

TEST(GgufVocabTest, AbsentOptionalKeysTakeLlamaCppDefaults) {
  gguf::Writer w;
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"});
  Result<Vocab> v = WriteAndLoad(w, "defaults.gguf");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->scores, (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(v->types, std::vector<TokenType>(3, TokenType::kNormal));
  EXPECT_EQ(v->bos_id, 1);
  EXPECT_EQ(v->eos_id, 2);
  EXPECT_EQ(v->unk_id, 0);
  EXPECT_TRUE(v->add_bos);
  EXPECT_TRUE(v->add_space_prefix);
}

void ExpectError(const gguf::Writer& w, const std::string& name, const std::string& expected) {
  Result<Vocab> v = WriteAndLoad(w, name);
  ASSERT_FALSE(v.ok()) << name;
  const std::string message = v.status().message();
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_NE(message.find(name), std::string::npos) << "error should name the file: " << message;
}

TEST(GgufVocabTest, RejectsOtherTokenizerModels) {
  gguf::Writer w = ToyWriter();
  w.SetString("tokenizer.ggml.model", "bert");
  ExpectError(w, "bert.gguf",
              "tokenizer model 'bert' is not supported (only 'llama' SentencePiece and 'gpt2' "
              "byte-level BPE)");
}

TEST(GgufVocabTest, RejectsMissingKeys) {
  gguf::Writer no_model;
  no_model.SetStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"});
  ExpectError(no_model, "no_model.gguf", "tokenizer.ggml.model");

  gguf::Writer no_tokens;
  no_tokens.SetString("tokenizer.ggml.model", "llama");
  ExpectError(no_tokens, "no_tokens.gguf", "tokenizer.ggml.tokens");
}

TEST(GgufVocabTest, RejectsLengthMismatches) {
  gguf::Writer scores = ToyWriter();
  scores.SetF32Array("tokenizer.ggml.scores", {0, 0, 0, -1});
  ExpectError(scores, "scores.gguf", "5 tokens but 4 scores");

  gguf::Writer types = ToyWriter();
  types.SetI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
  ExpectError(types, "types.gguf", "5 tokens but 6 token types");
}

TEST(GgufVocabTest, RejectsBadTypesAndIds) {
  gguf::Writer type = ToyWriter();
  type.SetI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 9});
  ExpectError(type, "bad_type.gguf", "token 4 has invalid token type 9");

  gguf::Writer byte = ToyWriter();
  byte.SetI32Array("tokenizer.ggml.token_type", {2, 3, 3, 1, 6});
  ExpectError(byte, "bad_byte.gguf", "not spelled <0xXX>");

  gguf::Writer bos = ToyWriter();
  bos.SetU32("tokenizer.ggml.bos_token_id", 5);
  ExpectError(bos, "bos.gguf", "bos token id 5 is out of range");

  gguf::Writer eos = ToyWriter();
  eos.SetU32("tokenizer.ggml.eos_token_id", 0xFFFFFFFFu);
  ExpectError(eos, "eos.gguf", "eos token id -1 is out of range");

  gguf::Writer tokens_type = ToyWriter();
  tokens_type.SetF32Array("tokenizer.ggml.tokens", {1, 2, 3});
  ExpectError(tokens_type, "tokens_type.gguf", "tokenizer.ggml.tokens");
}

// A vocab-only gpt2 GGUF: <s>, </s>, then "a", "b", "ab", and 9 filler
// tokens so that llama.cpp's default BOS/EOS id 11 is in range.
gguf::Writer ToyBpeWriter() {
  gguf::Writer w;
  w.SetString("tokenizer.ggml.model", "gpt2");
  std::vector<std::string> tokens = {"<s>", "</s>", "a", "b", "ab"};
  for (char c = '0'; c <= '8'; ++c) tokens.push_back(std::string("t") + c);
  w.SetStringArray("tokenizer.ggml.tokens", tokens);
  std::vector<int32_t> types(tokens.size(), 1);
  types[0] = types[1] = 3;
  w.SetI32Array("tokenizer.ggml.token_type", types);
  w.SetStringArray("tokenizer.ggml.merges", {"a b"});
  return w;
}

TEST(GgufVocabTest, ReadsByteLevelBpeWithLlamaCppDefaults) {
  Result<Vocab> v = WriteAndLoad(ToyBpeWriter(), "bpe_defaults.gguf");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->type, VocabType::kByteLevelBpe);
  EXPECT_EQ(v->pre, "default");
  EXPECT_EQ(v->merges, (std::vector<std::string>{"a b"}));
  EXPECT_EQ(v->bos_id, 11);
  EXPECT_EQ(v->eos_id, 11);
  EXPECT_EQ(v->unk_id, -1);
  EXPECT_FALSE(v->add_bos);
  EXPECT_FALSE(v->add_eos);
  EXPECT_FALSE(v->add_space_prefix);
  EXPECT_EQ(Tokenizer(std::move(v).value()).Encode("ab", true), (std::vector<int32_t>{4}));
}

TEST(GgufVocabTest, AddBosDefaultsToThePreTokenizers) {
  for (const auto& [pre, add_bos] : std::vector<std::pair<std::string, bool>>{
           {"llama-bpe", true}, {"tekken", true}, {"gpt-2", false}, {"qwen2", false}}) {
    gguf::Writer w = ToyBpeWriter();
    w.SetString("tokenizer.ggml.pre", pre);
    Result<Vocab> v = WriteAndLoad(w, "pre_" + pre + ".gguf");
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(v->pre, pre);
    EXPECT_EQ(v->add_bos, add_bos) << pre;
  }
}

TEST(GgufVocabTest, AddBosAndAddEosFromTheFile) {
  gguf::Writer w = ToyBpeWriter();
  w.SetString("tokenizer.ggml.pre", "llama-bpe");
  w.SetU32("tokenizer.ggml.bos_token_id", 0);
  w.SetU32("tokenizer.ggml.eos_token_id", 1);
  w.SetBool("tokenizer.ggml.add_bos_token", false);
  w.SetBool("tokenizer.ggml.add_eos_token", true);
  Result<Vocab> v = WriteAndLoad(w, "bos_eos.gguf");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_FALSE(v->add_bos);
  EXPECT_TRUE(v->add_eos);
  const Tokenizer t(std::move(v).value());
  EXPECT_EQ(t.Encode("ab", /*add_special=*/true), (std::vector<int32_t>{4, 1}));
  EXPECT_EQ(t.Encode("ab", /*add_special=*/false), (std::vector<int32_t>{4}));
}

TEST(GgufVocabTest, RejectsBadByteLevelBpeVocabularies) {
  gguf::Writer unknown_pre = ToyBpeWriter();
  unknown_pre.SetString("tokenizer.ggml.pre", "my-new-bpe");
  ExpectError(unknown_pre, "unknown_pre.gguf",
              "unknown pre-tokenizer 'my-new-bpe' (tokenizer.ggml.pre)");

  gguf::Writer no_merges;
  no_merges.SetString("tokenizer.ggml.model", "gpt2");
  no_merges.SetStringArray("tokenizer.ggml.tokens", {"a", "b"});
  ExpectError(no_merges, "no_merges.gguf", "missing required key 'tokenizer.ggml.merges'");

  gguf::Writer bad_merge = ToyBpeWriter();
  bad_merge.SetStringArray("tokenizer.ggml.merges", {"a b", "ab"});
  ExpectError(bad_merge, "bad_merge.gguf", "merge 1 'ab' is not two pieces separated by a space");

  gguf::Writer bos = ToyBpeWriter();
  bos.SetU32("tokenizer.ggml.bos_token_id", 14);
  ExpectError(bos, "bpe_bos.gguf", "bos token id 14 is out of range");
}

}  // namespace
}  // namespace h2o
