// The byte-level BPE reference cases in tests/data/tokenizers (README.md
// there says where they come from).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace h2o::testing {

struct TokenizerCase {
  std::string text;
  std::vector<int32_t> ids;
};

inline std::string TokenizerDataPath(const std::string& name) {
  return std::string(H2O_TEST_DATA_DIR) + "/tokenizers/" + name;
}

// The real Llama 3 vocabulary, vocab-only.
inline std::string Llama3VocabPath() { return TokenizerDataPath("llama3-vocab.gguf"); }

// llama3_cases.jsonl: {"text", "ids"} per line.
std::vector<TokenizerCase> LoadLlama3Cases();

// A JSON array of ids per line (the peer captures); fails the test on
// malformed lines.
std::vector<std::vector<int32_t>> LoadIdLines(const std::string& path);

}  // namespace h2o::testing
