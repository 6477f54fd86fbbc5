// ROUGE against hand-worked examples; the arithmetic is in the comments.
#include "eval/rouge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace h2o {
namespace {

using Tokens = std::vector<std::string>;

TEST(RougeTokens, LowercasesAndSplitsOnEverythingButAlphanumerics) {
  EXPECT_EQ(RougeTokens("The Cat's HAT, 3.5 times!"),
            (Tokens{"the", "cat", "s", "hat", "3", "5", "times"}));
  EXPECT_EQ(RougeTokens("  tabs\tand\nnewlines  "), (Tokens{"tabs", "and", "newlines"}));
  EXPECT_EQ(RougeTokens("snake_case-and/slash"), (Tokens{"snake", "case", "and", "slash"}));
  // Each byte of a UTF-8 'é' is outside [a-z0-9], so it splits the word.
  EXPECT_EQ(RougeTokens("caf\xC3\xA9 na\xC3\xAFve"), (Tokens{"caf", "na", "ve"}));
  EXPECT_TRUE(RougeTokens("").empty());
  EXPECT_TRUE(RougeTokens("?! -- ...").empty());
}

TEST(Rouge, LinsCatUnderTheBedExample) {
  // c = the cat was found under the bed (7), r = the cat was under the bed (6).
  const RougeF1 f = Rouge("the cat was found under the bed", "the cat was under the bed");
  // Unigrams: the 2, cat, was, under, bed -> 6. P = 6/7, R = 6/6.
  // F1 = 2 (6/7)(1) / (6/7 + 1) = (12/7) / (13/7) = 12/13.
  EXPECT_DOUBLE_EQ(f.rouge1, 12.0 / 13.0);
  // Bigrams of c: the-cat cat-was was-found found-under under-the the-bed (6);
  // of r: the-cat cat-was was-under under-the the-bed (5). Shared: 4.
  // P = 4/6, R = 4/5, F1 = 2 (2/3)(4/5) / (2/3 + 4/5) = (16/15) / (22/15) = 8/11.
  EXPECT_DOUBLE_EQ(f.rouge2, 8.0 / 11.0);
  // LCS = the cat was under the bed (6): P = 6/7, R = 1, F1 = 12/13.
  EXPECT_DOUBLE_EQ(f.rougeL, 12.0 / 13.0);
}

TEST(Rouge, LcsNeedNotBeContiguous) {
  // Lin's S1/S2: r = police killed the gunman, c = police kill the gunman.
  // LCS = police . the gunman (3, skipping kill/killed): P = R = 3/4.
  const RougeF1 f = Rouge("police kill the gunman", "police killed the gunman");
  EXPECT_DOUBLE_EQ(f.rougeL, 0.75);
  // c = a b c d e (5), r = a x c y e z (6): LCS = a c e (3) with gaps in both.
  // P = 3/5, R = 3/6, F1 = 2 (0.6)(0.5) / 1.1 = 6/11.
  EXPECT_DOUBLE_EQ(Rouge("a b c d e", "a x c y e z").rougeL, 6.0 / 11.0);
}

TEST(Rouge, OrderMattersForLButNotForRouge1) {
  // Same bag of words, reversed: every unigram matches (ROUGE-1 = 1), no
  // bigram does, and the LCS is a single token: P = R = 1/5.
  const RougeF1 f = Rouge("e d c b a", "a b c d e");
  EXPECT_DOUBLE_EQ(f.rouge1, 1.0);
  EXPECT_DOUBLE_EQ(f.rouge2, 0.0);
  EXPECT_DOUBLE_EQ(f.rougeL, 0.2);
  // Lin's S3 against S1: c = the gunman kill police, r = police killed the gunman.
  // Unigrams: the gunman police -> P = R = 3/4. Bigrams: only the-gunman of 3
  // each -> 1/3. LCS = the gunman (2) -> P = R = 2/4.
  const RougeF1 g = Rouge("the gunman kill police", "police killed the gunman");
  EXPECT_DOUBLE_EQ(g.rouge1, 0.75);
  EXPECT_DOUBLE_EQ(g.rouge2, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(g.rougeL, 0.5);
}

TEST(Rouge, RepeatedWordsAreClipped) {
  // c = the the the the, r = the cat. "the" counts min(4, 1) = 1.
  // P = 1/4, R = 1/2, F1 = 2 (1/8) / (3/4) = 1/3. No shared bigram.
  // LCS = the (1): same P and R as ROUGE-1.
  const RougeF1 f = Rouge("the the the the", "the cat");
  EXPECT_DOUBLE_EQ(f.rouge1, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(f.rouge2, 0.0);
  EXPECT_DOUBLE_EQ(f.rougeL, 1.0 / 3.0);
}

TEST(Rouge, IdenticalAfterTokenizationScoresOne) {
  const RougeF1 f = Rouge("Hello, World! It's me.", "hello world it s me");
  EXPECT_DOUBLE_EQ(f.rouge1, 1.0);
  EXPECT_DOUBLE_EQ(f.rouge2, 1.0);
  EXPECT_DOUBLE_EQ(f.rougeL, 1.0);
}

TEST(Rouge, SingleTokenHasNoBigrams) {
  // rouge_score divides by max(count, 1): with no bigrams on either side
  // ROUGE-2 is 0, not 1.
  const RougeF1 f = Rouge("hello", "Hello!");
  EXPECT_DOUBLE_EQ(f.rouge1, 1.0);
  EXPECT_DOUBLE_EQ(f.rouge2, 0.0);
  EXPECT_DOUBLE_EQ(f.rougeL, 1.0);
}

TEST(Rouge, DisjointAndEmptyScoreZero) {
  for (const auto& [c, r] :
       std::vector<std::pair<std::string, std::string>>{{"red green blue", "one two three"},
                                                        {"", "the cat"},
                                                        {"the cat", ""},
                                                        {"...", "the cat"},
                                                        {"", ""}}) {
    const RougeF1 f = Rouge(c, r);
    EXPECT_EQ(f.rouge1, 0.0) << "'" << c << "' vs '" << r << "'";
    EXPECT_EQ(f.rouge2, 0.0) << "'" << c << "' vs '" << r << "'";
    EXPECT_EQ(f.rougeL, 0.0) << "'" << c << "' vs '" << r << "'";
  }
}

TEST(Rouge, SymmetricInItsArguments) {
  const RougeF1 a = Rouge("the cat was found under the bed", "a cat under a bed");
  const RougeF1 b = Rouge("a cat under a bed", "the cat was found under the bed");
  EXPECT_DOUBLE_EQ(a.rouge1, b.rouge1);
  EXPECT_DOUBLE_EQ(a.rouge2, b.rouge2);
  EXPECT_DOUBLE_EQ(a.rougeL, b.rougeL);
  EXPECT_GT(a.rouge1, 0.0);
}

}  // namespace
}  // namespace h2o
