// Every pre-tokenizer h2o implements, on the real Llama 3 vocabulary, must
// give exactly the ids llama.cpp (b7847) gave for the 473 texts of
// llama3_cases.jsonl (captured by scripts/peer_tokenizers.sh into
// tests/data/tokenizers/peer/, see manifest.json there).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/pre_tokenizer_specs.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_cases.h"
#include "tokenizer/vocab_variant.h"

namespace h2o {
namespace {

using testing::LoadIdLines;
using testing::LoadLlama3Cases;
using testing::TokenizerCase;
using testing::TokenizerDataPath;

// pre-tokenizer name -> its file of captured ids.
std::map<std::string, std::string> Manifest() {
  std::ifstream in(TokenizerDataPath("peer/manifest.json"));
  EXPECT_TRUE(in.good()) << "missing tests/data/tokenizers/peer/manifest.json";
  return nlohmann::json::parse(in).at("ids").get<std::map<std::string, std::string>>();
}

Vocab Llama3Vocab() {
  auto file = gguf::File::Open(testing::Llama3VocabPath());
  H2O_CHECK(file.ok());
  auto vocab = LoadVocabFromGguf(**file);
  H2O_CHECK(vocab.ok());
  return std::move(vocab).value();
}

// Compares every case; reports the first few mismatches with their text.
void ExpectIds(const Tokenizer& tokenizer, const std::vector<TokenizerCase>& cases,
               const std::vector<std::vector<int32_t>>& expected, const std::string& pre) {
  ASSERT_EQ(expected.size(), cases.size()) << pre;
  int failures = 0;
  for (size_t i = 0; i < cases.size() && failures < 5; ++i) {
    const std::vector<int32_t> ids = tokenizer.Encode(cases[i].text, /*add_special=*/true);
    if (ids == expected[i]) continue;
    ++failures;
    ADD_FAILURE() << "pre '" << pre << "', case " << i << ": " << ::testing::PrintToString(ids)
                  << " != llama.cpp " << ::testing::PrintToString(expected[i]) << " for text '"
                  << cases[i].text << "'";
  }
}

TEST(PeerPreTokenizersTest, EveryImplementedNameWasCaptured) {
  const std::map<std::string, std::string> manifest = Manifest();
  for (const PreTokenizerSpec& spec : PreTokenizerSpecs()) {
    for (std::string_view name : spec.names) {
      EXPECT_TRUE(manifest.contains(std::string(name))) << name;
    }
  }
  for (const auto& [name, file] : manifest) EXPECT_NE(FindPreTokenizer(name), nullptr) << name;
}

// One tokenizer per spec; every name of the spec must match its capture.
TEST(PeerPreTokenizersTest, EveryNameGivesLlamaCppIds) {
  const std::map<std::string, std::string> manifest = Manifest();
  const std::vector<TokenizerCase> cases = LoadLlama3Cases();
  const Vocab llama3 = Llama3Vocab();
  for (const PreTokenizerSpec& spec : PreTokenizerSpecs()) {
    Vocab vocab = llama3;
    vocab.pre = std::string(spec.names[0]);
    // The variants have no add_bos_token key: llama.cpp used its default.
    vocab.add_bos = spec.add_bos;
    const Tokenizer tokenizer(std::move(vocab));
    for (std::string_view name : spec.names) {
      const auto it = manifest.find(std::string(name));
      if (it == manifest.end()) continue;  // reported by the test above
      ExpectIds(tokenizer, cases, LoadIdLines(TokenizerDataPath("peer/" + it->second)),
                std::string(name));
    }
  }
}

// The same through a variant file, as the capture script made them: the
// loader must apply the pre-tokenizer's add_bos default.
TEST(PeerPreTokenizersTest, VariantFilesLoadWithTheirDefaults) {
  const std::map<std::string, std::string> manifest = Manifest();
  const std::vector<TokenizerCase> cases = LoadLlama3Cases();
  auto source = gguf::File::Open(testing::Llama3VocabPath());
  ASSERT_TRUE(source.ok()) << source.status().message();
  for (const std::string pre : {"qwen2", "tekken"}) {
    const std::string path =
        (std::filesystem::path(::testing::TempDir()) / ("variant-" + pre + ".gguf")).string();
    ASSERT_TRUE(WriteVocabVariant(**source, {pre, std::nullopt, std::nullopt}, path).ok());
    auto file = gguf::File::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    auto tokenizer = LoadTokenizerFromGguf(**file);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
    EXPECT_EQ(tokenizer->vocab().pre, pre);
    ExpectIds(*tokenizer, cases, LoadIdLines(TokenizerDataPath("peer/" + manifest.at(pre))), pre);
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace h2o
