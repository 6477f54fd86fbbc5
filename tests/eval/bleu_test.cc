// BLEU-4 and Self-BLEU against hand-worked examples; the arithmetic is in
// the comments, and expected values are built from it in double precision.
#include "eval/bleu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace h2o {
namespace {

using Texts = std::vector<std::string>;

double Bleu(const std::string& candidate, const Texts& references) {
  return SentenceBleu(candidate, references);
}

TEST(SentenceBleu, IdenticalScoresOneAndDisjointZero) {
  EXPECT_DOUBLE_EQ(Bleu("the quick brown fox jumps", {"the quick brown fox jumps"}), 1.0);
  EXPECT_EQ(Bleu("the quick brown fox jumps", {"lazy dogs sleep all day"}), 0.0);
}

TEST(SentenceBleu, TokenizesLikeRouge) {
  // Case and punctuation vanish: both sides are "the cat sat on".
  EXPECT_DOUBLE_EQ(Bleu("The CAT -- sat on!", {"the cat sat on"}), 1.0);
}

TEST(SentenceBleu, CatIsOnTheMat) {
  // c = the cat is on the mat (6), r = there is a cat on the mat (7).
  // p1: the min(2,1) + cat + is + on + mat = 5 of 6.
  // p2: c has the-cat cat-is is-on on-the the-mat; r shares on-the the-mat: 2 of 5.
  // p3: c has the-cat-is cat-is-on is-on-the on-the-mat; r shares on-the-mat: 1 of 4.
  // p4: c has 3 four-grams, none in r: smoothed to 0.1 / 3.
  // BP: c = 6 < r = 7 -> exp(1 - 7/6).
  const double expected =
      std::exp(1.0 - 7.0 / 6.0) * std::pow((5.0 / 6) * (2.0 / 5) * (1.0 / 4) * (0.1 / 3), 0.25);
  EXPECT_NEAR(Bleu("the cat is on the mat", {"there is a cat on the mat"}), expected, 1e-12);
}

TEST(SentenceBleu, ClipsByTheLargestCountInAnyOneReference) {
  // Papineni's example: c = "the" x7; r1 = The cat is on the mat (the: 2),
  // r2 = There is a cat on the mat (the: 1). p1 = min(7, max(2, 1)) / 7 = 2/7.
  // "the the" (6 bigrams), 5 trigrams, 4 four-grams: none in either
  // reference: 0.1/6, 0.1/5, 0.1/4. BP: c = 7, closest r = 7 -> 1.
  const double expected = std::pow((2.0 / 7) * (0.1 / 6) * (0.1 / 5) * (0.1 / 4), 0.25);
  EXPECT_NEAR(
      Bleu("the the the the the the the", {"The cat is on the mat.", "There is a cat on the mat."}),
      expected, 1e-12);
}

TEST(SentenceBleu, BrevityPenaltyUsesTheClosestReferenceLength) {
  // c = the cat sat on (4): every n-gram, n = 1..4, is in each reference.
  // One reference of 6: BP = exp(1 - 6/4) = exp(-0.5).
  EXPECT_NEAR(Bleu("the cat sat on", {"the cat sat on the mat"}), std::exp(-0.5), 1e-12);
  // References of 6 and 5: 5 is closer to 4, BP = exp(1 - 5/4).
  EXPECT_NEAR(Bleu("the cat sat on", {"the cat sat on the mat", "the cat sat on it"}),
              std::exp(-0.25), 1e-12);
  // References of 3 and 5 are equally close: the shorter wins, c > r, BP = 1
  // (the 4-gram still matches in the second reference).
  EXPECT_DOUBLE_EQ(Bleu("the cat sat on", {"the cat sat", "the cat sat on it"}), 1.0);
}

TEST(SentenceBleu, ShortCandidateIsSmoothedNotZero) {
  // 3 tokens against themselves: p1 = p2 = p3 = 1; no 4-grams, so p4 =
  // 0.1 / max(0, 1) = 0.1. BLEU = 0.1^(1/4).
  EXPECT_NEAR(Bleu("the cat sat", {"the cat sat"}), std::pow(0.1, 0.25), 1e-12);
}

TEST(SentenceBleu, EmptyCandidateOrNoReferencesScoreZero) {
  EXPECT_EQ(Bleu("", {"the cat sat on the mat"}), 0.0);
  EXPECT_EQ(Bleu("?!", {"the cat sat on the mat"}), 0.0);
  EXPECT_EQ(Bleu("the cat sat on the mat", {}), 0.0);
  EXPECT_EQ(Bleu("the cat sat on the mat", {""}), 0.0);
}

TEST(SelfBleu, FewerThanTwoTextsIsZero) {
  EXPECT_EQ(SelfBleu(Texts{}), 0.0);
  EXPECT_EQ(SelfBleu(Texts{"the cat sat on the mat"}), 0.0);
}

TEST(SelfBleu, IdenticalTextsScoreOneDisjointZero) {
  EXPECT_DOUBLE_EQ(SelfBleu(Texts(3, "the cat sat on the mat")), 1.0);
  EXPECT_EQ(SelfBleu(Texts{"red green blue yellow", "one two three four", "cats dogs birds fish"}),
            0.0);
}

TEST(SelfBleu, MeanOverEachTextAgainstTheOthers) {
  // A = B = the cat sat on the mat; C shares no word.
  // BLEU(A, {B, C}) = 1 (every n-gram clipped against B, closest length 6 = c),
  // BLEU(B, {A, C}) = 1, BLEU(C, {A, B}) = 0 (no unigram matches). Mean 2/3.
  EXPECT_DOUBLE_EQ(
      SelfBleu(Texts{"the cat sat on the mat", "the cat sat on the mat", "dogs run fast today"}),
      2.0 / 3.0);
}

}  // namespace
}  // namespace h2o
