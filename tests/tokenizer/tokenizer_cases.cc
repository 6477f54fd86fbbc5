#include "tokenizer/tokenizer_cases.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace h2o::testing {

std::vector<TokenizerCase> LoadLlama3Cases() {
  std::ifstream in(TokenizerDataPath("llama3_cases.jsonl"), std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing tests/data/tokenizers/llama3_cases.jsonl";
  std::vector<TokenizerCase> cases;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json json = nlohmann::json::parse(line);
    cases.push_back(
        {json.at("text").get<std::string>(), json.at("ids").get<std::vector<int32_t>>()});
  }
  return cases;
}

std::vector<std::vector<int32_t>> LoadIdLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing " << path;
  std::vector<std::vector<int32_t>> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line).get<std::vector<int32_t>>());
  }
  return lines;
}

}  // namespace h2o::testing
