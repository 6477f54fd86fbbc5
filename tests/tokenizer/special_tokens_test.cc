// Which special tokens SpecialTokenSplitter cuts out, derived by hand from
// llama.cpp's tokenizer_st_partition: longest token first, each token's
// occurrences left to right within what longer ones left.
#include "tokenizer/special_tokens.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace h2o {
namespace {

Vocab SpecialsVocab(const std::vector<std::pair<std::string, TokenType>>& tokens) {
  Vocab v;
  for (const auto& [text, type] : tokens) {
    v.tokens.push_back(text);
    v.scores.push_back(0);
    v.types.push_back(type);
  }
  return v;
}

// Text fragments as themselves, special tokens as "[id]".
std::string Render(const SpecialTokenSplitter& s, std::string_view text) {
  std::vector<TextFragment> fragments;
  s.Split(text, &fragments);
  std::string out;
  for (const TextFragment& f : fragments) {
    if (f.special_id >= 0) {
      out.append("[").append(std::to_string(f.special_id)).append("]");
    } else {
      out.append("'").append(f.text).append("'");
    }
  }
  return out;
}

TEST(SpecialTokensTest, ControlUserDefinedAndUnknownTokensAreCutOut) {
  const SpecialTokenSplitter s(SpecialsVocab({{"<s>", TokenType::kControl},
                                              {"<u>", TokenType::kUserDefined},
                                              {"<unk>", TokenType::kUnknown},
                                              {"<x>", TokenType::kNormal},
                                              {"<unused>", TokenType::kUnused}}));
  EXPECT_EQ(Render(s, "a<s>b<u><unk>c<x><unused>"), "'a'[0]'b'[1][2]'c<x><unused>'");
  EXPECT_EQ(Render(s, "<s><s>"), "[0][0]");
  EXPECT_EQ(Render(s, "plain"), "'plain'");
  EXPECT_EQ(Render(s, ""), "");
}

TEST(SpecialTokensTest, LongerTokensGoFirst) {
  const SpecialTokenSplitter s(
      SpecialsVocab({{"AB", TokenType::kControl}, {"BCD", TokenType::kControl}}));
  EXPECT_EQ(Render(s, "ABCD"), "'A'[1]");  // not [0]'CD'
  EXPECT_EQ(Render(s, "xABCDABx"), "'xA'[1][0]'x'");
  EXPECT_EQ(Render(s, "ABAB"), "[0][0]");
}

TEST(SpecialTokensTest, OccurrencesOfOneTokenDoNotOverlap) {
  const SpecialTokenSplitter s(SpecialsVocab({{"aa", TokenType::kControl}}));
  EXPECT_EQ(Render(s, "aaa"), "[0]'a'");
  EXPECT_EQ(Render(s, "aaaa"), "[0][0]");
}

TEST(SpecialTokensTest, EqualLengthsGoInIdOrder) {
  const SpecialTokenSplitter ab_first(
      SpecialsVocab({{"ab", TokenType::kControl}, {"bc", TokenType::kControl}}));
  EXPECT_EQ(Render(ab_first, "abc"), "[0]'c'");
  const SpecialTokenSplitter bc_first(
      SpecialsVocab({{"bc", TokenType::kControl}, {"ab", TokenType::kControl}}));
  EXPECT_EQ(Render(bc_first, "abc"), "'a'[0]");
}

}  // namespace
}  // namespace h2o
