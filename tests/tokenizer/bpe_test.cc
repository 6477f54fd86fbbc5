// Byte-level BPE on hand-built vocabularies: the expected ids follow from
// the merge rule (lowest rank first, leftmost on ties) worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace h2o {
namespace {

using Ids = std::vector<int32_t>;
constexpr int32_t kBos = 0, kEos = 1;

// <s>, </s> (control), then the given tokens, spelled in GPT-2's byte
// characters ("\xC4\xA0" is Ġ, a space).
Vocab ToyBpe(const std::vector<std::string>& tokens, const std::vector<std::string>& merges,
             const std::string& pre = "gpt-2") {
  Vocab v;
  v.type = VocabType::kByteLevelBpe;
  v.pre = pre;
  v.tokens = {"<s>", "</s>"};
  v.types = {TokenType::kControl, TokenType::kControl};
  for (const std::string& t : tokens) {
    v.tokens.push_back(t);
    v.types.push_back(TokenType::kNormal);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  v.merges = merges;
  v.bos_id = kBos;
  v.eos_id = kEos;
  v.unk_id = -1;
  v.add_bos = false;
  v.add_space_prefix = false;
  return v;
}

TEST(BpeTest, MergesApplyInRankOrder) {
  const std::vector<std::string> tokens = {"a", "b", "c", "ab", "bc", "abc"};
  const int32_t a = 2, c = 4, ab = 5, bc = 6, abc = 7;
  // (b,c) outranks (a,b): a + bc, and nothing merges those two.
  EXPECT_EQ(Tokenizer(ToyBpe(tokens, {"b c", "a b"})).Encode("abc", false), (Ids{a, bc}));
  EXPECT_EQ(Tokenizer(ToyBpe(tokens, {"a b", "b c"})).Encode("abc", false), (Ids{ab, c}));
  EXPECT_EQ(Tokenizer(ToyBpe(tokens, {"b c", "a b", "a bc"})).Encode("abc", false), (Ids{abc}));
}

TEST(BpeTest, TiesGoToTheLeftmostPair) {
  const Tokenizer t(ToyBpe({"a", "aa", "aaaa"}, {"a a", "aa aa"}));
  const int32_t a = 2, aa = 3, aaaa = 4;
  EXPECT_EQ(t.Encode("aaa", false), (Ids{aa, a}));
  EXPECT_EQ(t.Encode("aaaaa", false), (Ids{aaaa, a}));
  EXPECT_EQ(t.Encode("aaaaaa", false), (Ids{aaaa, aa}));
}

TEST(BpeTest, MergesStayWithinPreTokenizerWords) {
  const Tokenizer t(ToyBpe({"a", "b", "ab", "\xC4\xA0",
                            "\xC4\xA0"
                            "b"},
                           {"a b", "\xC4\xA0 b"}));
  const int32_t a = 2, ab = 4, space_b = 6;
  EXPECT_EQ(t.Encode("ab", false), (Ids{ab}));
  EXPECT_EQ(t.Encode("a b", false), (Ids{a, space_b}));  // words "a", " b"
}

TEST(BpeTest, IgnoreMergesTakesWholeWordsThatAreTokens) {
  const std::vector<std::string> tokens = {"a", "b", "c", "abc"};
  EXPECT_EQ(Tokenizer(ToyBpe(tokens, {}, "llama-bpe")).Encode("abc", false), (Ids{5}));
  EXPECT_EQ(Tokenizer(ToyBpe(tokens, {}, "gpt-2")).Encode("abc", false), (Ids{2, 3, 4}));
}

TEST(BpeTest, MergedPiecesNoTokenSpellsStillMergeOn) {
  // "ab" is no token, but the merges build it on the way to "abc".
  const Tokenizer t(ToyBpe({"a", "b", "c", "abc"}, {"a b", "ab c"}));
  EXPECT_EQ(t.Encode("abc", false), (Ids{5}));
  // Left as "ab", it becomes the tokens of its single bytes (llama.cpp).
  EXPECT_EQ(t.Encode("ab", false), (Ids{2, 3}));
}

TEST(BpeTest, BytesWithoutATokenAreDroppedAsLlamaCppDoes) {
  // é (C3 A9) is spelled "Ã©"; neither character is a token here.
  EXPECT_EQ(Tokenizer(ToyBpe({"a"}, {})).Encode("a\xC3\xA9", false), (Ids{2}));
}

TEST(BpeTest, SpecialTokensBosAndEos) {
  Vocab v = ToyBpe({"a", "b", "<|x|>", "\xC4\xA0"}, {});
  v.types[4] = TokenType::kControl;  // <|x|>
  v.add_bos = true;
  v.add_eos = true;
  const Tokenizer t(std::move(v));
  const int32_t a = 2, b = 3, x = 4, space = 5;
  const Ids ids = t.Encode("a<|x|>b ", true);
  EXPECT_EQ(ids, (Ids{kBos, a, x, b, space, kEos}));
  EXPECT_EQ(t.Encode("a<|x|>b ", false), (Ids{a, x, b, space}));
  EXPECT_EQ(t.Decode(ids, /*remove_special=*/true), "a<|x|>b ");
  EXPECT_EQ(t.Decode(ids, /*remove_special=*/false), "<s>a<|x|>b </s>");
  EXPECT_EQ(t.TokenToPiece(x), "");  // control tokens stream as nothing
  EXPECT_EQ(t.TokenToPiece(space), " ");
  EXPECT_EQ(t.TokenToPiece(a), "a");
}

TEST(BpeTest, TokenToPieceGivesRawBytesOfPartialCharacters) {
  // The bytes of é as two tokens: each streams as one raw byte.
  const Tokenizer t(ToyBpe({"\xC3\x83", "\xC2\xA9"}, {}));  // "Ã", "©"
  EXPECT_EQ(t.Encode("\xC3\xA9", false), (Ids{2, 3}));
  EXPECT_EQ(t.TokenToPiece(2), "\xC3");
  EXPECT_EQ(t.TokenToPiece(3), "\xA9");
  EXPECT_EQ(t.Decode({2, 3}, false), "\xC3\xA9");
}

}  // namespace
}  // namespace h2o
