// Behaviour of the SentencePiece-BPE merge rule on hand-built vocabularies,
// plus a randomized comparison against a naive quadratic encoder.
#include "tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace h2o {
namespace {

constexpr int32_t kUnk = 0, kBos = 1, kEos = 2;

// <unk>, <s>, </s>, then the given normal pieces with their scores.
Vocab ToyVocab(const std::vector<std::pair<std::string, float>>& pieces,
               bool add_space_prefix = true) {
  Vocab v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.scores = {0, 0, 0};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (const auto& [piece, score] : pieces) {
    v.tokens.push_back(piece);
    v.scores.push_back(score);
    v.types.push_back(TokenType::kNormal);
  }
  v.add_space_prefix = add_space_prefix;
  return v;
}

void AddByteTokens(Vocab* v) {
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    v->tokens.push_back(std::string("<0x") + kHex[b / 16] + kHex[b % 16] + ">");
    v->scores.push_back(0);
    v->types.push_back(TokenType::kByte);
  }
}

TEST(TokenizerTest, HighestScoringMergeWins) {
  // "ab" -> "▁ab" as symbols ▁ a b; both "▁a" and "ab" are pieces, "▁ab" is not.
  {
    Tokenizer t(ToyVocab({{"▁", -5}, {"a", -5}, {"b", -5}, {"▁a", -1}, {"ab", -2}}));
    EXPECT_EQ(t.Encode("ab", false), (std::vector<int32_t>{6, 5}));  // ▁a b
  }
  {
    Tokenizer t(ToyVocab({{"▁", -5}, {"a", -5}, {"b", -5}, {"▁a", -2}, {"ab", -1}}));
    EXPECT_EQ(t.Encode("ab", false), (std::vector<int32_t>{3, 7}));  // ▁ ab
  }
}

TEST(TokenizerTest, MergesChainIntoLongerPieces) {
  // bc first (highest), then abc, then ▁abc; "ab" never forms.
  Tokenizer t(ToyVocab({{"▁", 0}, {"a", 0}, {"b", 0}, {"c", 0},
                        {"bc", -1}, {"ab", -3}, {"abc", -2}, {"▁abc", -4}}));
  EXPECT_EQ(t.Encode("abc", false), (std::vector<int32_t>{10}));
  EXPECT_EQ(t.Encode("abc abc", true), (std::vector<int32_t>{kBos, 10, 10}));
}

TEST(TokenizerTest, TiesGoToTheLeftmostPair) {
  Tokenizer t(ToyVocab({{"a", 0}, {"aa", -1}}, /*add_space_prefix=*/false));
  EXPECT_EQ(t.Encode("aaa", false), (std::vector<int32_t>{4, 3}));     // aa a
  EXPECT_EQ(t.Encode("aaaaa", false), (std::vector<int32_t>{4, 4, 3}));  // aa aa a
}

TEST(TokenizerTest, NoSpacePrefixWhenDisabled) {
  Tokenizer t(ToyVocab({{"▁", 0}, {"a", 0}}, /*add_space_prefix=*/false));
  EXPECT_EQ(t.Encode("a a", false), (std::vector<int32_t>{4, 3, 4}));
  EXPECT_EQ(t.Decode({4, 3, 4}, /*remove_special=*/false), "a a");
}

TEST(TokenizerTest, UnknownCharactersFallBackToBytesOrUnk) {
  Vocab with_bytes = ToyVocab({{"▁", 0}, {"a", 0}});
  AddByteTokens(&with_bytes);
  Tokenizer t(with_bytes);
  const int32_t byte0 = 5;  // <0x00>
  // "é" is C3 A9: one unknown character, two byte tokens.
  EXPECT_EQ(t.Encode("a\xC3\xA9", false),
            (std::vector<int32_t>{3, 4, byte0 + 0xC3, byte0 + 0xA9}));
  EXPECT_EQ(t.Decode(t.Encode("a\xC3\xA9", true), true), "a\xC3\xA9");

  Tokenizer no_bytes(ToyVocab({{"▁", 0}, {"a", 0}}));
  EXPECT_EQ(no_bytes.Encode("a\xC3\xA9", false), (std::vector<int32_t>{3, 4, kUnk, kUnk}));
}

TEST(TokenizerTest, UnknownCharacterCanMergeIntoAKnownPiece) {
  // "é" alone is not a piece but "▁é" is: the merge must still happen.
  Tokenizer t(ToyVocab({{"▁", 0}, {"▁\xC3\xA9", -1}}));
  EXPECT_EQ(t.Encode("\xC3\xA9", false), (std::vector<int32_t>{4}));
}

TEST(TokenizerTest, UnusedPiecesAreNotMatchedFromText) {
  Vocab v = ToyVocab({{"▁", 0}});
  v.tokens.push_back("x");
  v.scores.push_back(0);
  v.types.push_back(TokenType::kUnused);
  AddByteTokens(&v);
  Tokenizer t(v);
  const int32_t byte0 = 5;
  // Unused "x" falls back to bytes.
  const std::vector<int32_t> ids = t.Encode("x", false);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, byte0 + 'x'}));
  EXPECT_EQ(t.Decode(ids, /*remove_special=*/false), "x");
}

TEST(TokenizerTest, SpecialTokensWrittenInTheTextAreThoseTokens) {
  // As llama.cpp (b7847) with parse_special, whose `llb tokenize` gives
  // "1 1 410 444 2 410 410 0 348" for "<s>x</s> <unk>y" on stories260K: the
  // text after each special token gets the dummy-prefix space again.
  Vocab v = ToyVocab({{"▁", 0}, {"x", 0}, {"▁x", -1}});
  AddByteTokens(&v);
  Tokenizer t(v);
  const int32_t space = 3, x = 4, space_x = 5, byte0 = 6;
  EXPECT_EQ(t.Encode("<s>x</s> <unk>x", true),
            (std::vector<int32_t>{kBos, kBos, space_x, kEos, space, space, kUnk, space_x}));
  EXPECT_EQ(t.Encode("x<s", false), (std::vector<int32_t>{space_x, byte0 + '<', byte0 + 's'}));
  EXPECT_EQ(t.Decode(t.Encode("<s>x</s>x", false), /*remove_special=*/false), "<s>x</s>x");
  EXPECT_EQ(t.Decode({kBos, x}, /*remove_special=*/true), "x");
}

TEST(TokenizerTest, EmptyTextGivesOnlyBos) {
  Tokenizer t(ToyVocab({{"▁", 0}}));
  EXPECT_EQ(t.Encode("", true), (std::vector<int32_t>{kBos}));
  EXPECT_TRUE(t.Encode("", false).empty());
  EXPECT_EQ(t.Decode({kBos}, /*remove_special=*/true), "");
  EXPECT_EQ(t.Decode({}, /*remove_special=*/false), "");
}

TEST(TokenizerTest, TokenToPieceAndDecodeOfSpecialTokens) {
  Vocab v = ToyVocab({{"▁", 0}, {"▁hi", 0}});
  AddByteTokens(&v);
  Tokenizer t(v);
  const int32_t byte0 = 5;
  EXPECT_EQ(t.TokenToPiece(kBos), "");
  EXPECT_EQ(t.TokenToPiece(kEos), "");
  EXPECT_EQ(t.TokenToPiece(byte0 + 0x0A), "\n");
  EXPECT_EQ(t.TokenToPiece(byte0 + 0xE2), "\xE2");
  EXPECT_EQ(t.TokenToPiece(4), " hi");  // streaming keeps the space
  EXPECT_EQ(t.TokenToPiece(kUnk), " \xE2\x81\x87 ");
  EXPECT_EQ(t.TokenToPiece(-1), "");
  EXPECT_EQ(t.TokenToPiece(t.n_vocab()), "");
  // Decode drops the BOS Encode adds (add_bos) and writes other control
  // tokens as spelled; the dummy-prefix space goes only at the start and
  // after each control token, where Encode put one.
  EXPECT_EQ(t.Decode({kBos, 4, 4, kEos}, /*remove_special=*/true), "hi hi</s>");
  EXPECT_EQ(t.Decode({kBos, 4, 4}, /*remove_special=*/false), "<s>hi hi");
  EXPECT_EQ(t.Decode({4, 4}, /*remove_special=*/true), "hi hi");
  EXPECT_EQ(t.Decode({kBos, 4, kEos, kBos, 4}, /*remove_special=*/true), "hi</s><s>hi");
  EXPECT_EQ(t.Decode({4, -3, 999, 4}, /*remove_special=*/true), "hi hi");  // invalid ids skipped
}

TEST(TokenizerTest, AccessorsReflectVocab) {
  Vocab v = ToyVocab({{"▁", 0}});
  v.bos_id = 2;
  v.eos_id = 1;
  Tokenizer t(v);
  EXPECT_EQ(t.n_vocab(), 4);
  EXPECT_EQ(t.bos_id(), 2);
  EXPECT_EQ(t.eos_id(), 1);
  EXPECT_EQ(t.vocab().tokens[3], "▁");
}

// Naive llama2.c-style encoder: rescan all adjacent pairs each round.
std::vector<int32_t> NaiveEncode(const Vocab& v, const std::string& text) {
  std::unordered_map<std::string, int32_t> ids;
  std::vector<int32_t> byte_ids(256, v.unk_id);
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.types[i] == TokenType::kNormal) ids.emplace(v.tokens[i], static_cast<int32_t>(i));
    if (v.types[i] == TokenType::kByte) byte_ids[ParseByteToken(v.tokens[i])] = i;
  }
  std::vector<std::string> syms;
  std::string norm = "▁";
  for (char c : text) norm += c == ' ' ? std::string("▁") : std::string(1, c);
  for (size_t i = 0; i < norm.size();) {
    const size_t len = (static_cast<unsigned char>(norm[i]) == 0xE2) ? 3 : 1;
    syms.push_back(norm.substr(i, len));
    i += len;
  }
  while (true) {
    float best = -std::numeric_limits<float>::infinity();
    int best_i = -1;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      const auto it = ids.find(syms[i] + syms[i + 1]);
      if (it != ids.end() && (best_i < 0 || v.scores[it->second] > best)) {
        best = v.scores[it->second];
        best_i = static_cast<int>(i);
      }
    }
    if (best_i < 0) break;
    syms[best_i] += syms[best_i + 1];
    syms.erase(syms.begin() + best_i + 1);
  }
  std::vector<int32_t> out;
  for (const auto& s : syms) {
    const auto it = ids.find(s);
    if (it != ids.end()) {
      out.push_back(it->second);
    } else {
      for (char c : s) out.push_back(byte_ids[static_cast<unsigned char>(c)]);
    }
  }
  return out;
}

TEST(TokenizerTest, MatchesNaiveEncoderOnRandomVocabsAndTexts) {
  std::mt19937 rng(1234);
  const std::string alphabet = "ab c";
  auto random_string = [&](size_t max_len) {
    std::string s(1 + rng() % max_len, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::pair<std::string, float>> pieces = {{"▁", 0}, {"a", 0}, {"b", 0}};
    std::unordered_map<std::string, bool> seen;
    for (int i = 0; i < 12; ++i) {
      std::string p = random_string(4);
      if (trial % 2 == 1) {
        // SentencePiece-shaped pieces (spaces only as a leading run): Encode
        // then merges word by word, which must not change the result.
        const size_t lead = p.find_first_not_of(' ');
        if (lead != std::string::npos) {
          p.erase(std::remove(p.begin() + lead, p.end(), ' '), p.end());
        }
      }
      for (size_t k; (k = p.find(' ')) != std::string::npos;) p.replace(k, 1, "▁");
      if (p.size() < 2 || seen[p]) continue;
      seen[p] = true;
      pieces.push_back({p, static_cast<float>(-static_cast<int>(rng() % 4))});  // many ties
    }
    Vocab v = ToyVocab(pieces);
    AddByteTokens(&v);
    Tokenizer t(v);
    for (int k = 0; k < 20; ++k) {
      const std::string text = random_string(24);
      ASSERT_EQ(t.Encode(text, false), NaiveEncode(v, text)) << "text '" << text << "'";
      ASSERT_EQ(t.Decode(t.Encode(text, true), true), text);
    }
  }
}

}  // namespace
}  // namespace h2o
