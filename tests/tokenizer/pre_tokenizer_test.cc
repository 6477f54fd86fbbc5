// Word splits derived by hand from the patterns' regex semantics.
#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer_specs.h"

namespace h2o {
namespace {

using Words = std::vector<std::string>;

Words Split(const PreTokenizer& pre, std::string_view text) {
  std::vector<std::string_view> views;
  pre.Split(text, &views);
  return Words(views.begin(), views.end());
}

Words SplitWith(std::string_view name, std::string_view text) {
  const PreTokenizerSpec* spec = FindPreTokenizer(name);
  EXPECT_NE(spec, nullptr) << name;
  return Split(PreTokenizer(spec->patterns), text);
}

Words SplitWithPatterns(std::vector<std::string_view> patterns, std::string_view text) {
  return Split(PreTokenizer(patterns), text);
}

TEST(PreTokenizerTest, Llama3) {
  EXPECT_EQ(SplitWith("llama-bpe", "Hello world's 123456 ok!!\n\n  x"),
            (Words{"Hello", " world", "'s", " ", "123", "456", " ok", "!!\n\n", " ", " x"}));
  EXPECT_EQ(SplitWith("llama-bpe", "I'LL don't"), (Words{"I", "'LL", " don", "'t"}));
}

TEST(PreTokenizerTest, Gpt2) {
  EXPECT_EQ(SplitWith("gpt-2", "Hello world's 123456 ok!!\n\n  x"),
            (Words{"Hello", " world", "'s", " 123456", " ok", "!!", "\n\n ", " x"}));
  // Contractions are lower case only.
  EXPECT_EQ(SplitWith("gpt-2", "I'LL"), (Words{"I", "'", "LL"}));
}

TEST(PreTokenizerTest, Qwen2SplitsDigitsOneByOne) {
  EXPECT_EQ(SplitWith("qwen2", "a 2024"), (Words{"a", " ", "2", "0", "2", "4"}));
}

TEST(PreTokenizerTest, TekkenSplitsAtCaseChanges) {
  // A run of capitals then lower case is one word; lower then capital splits.
  EXPECT_EQ(SplitWith("tekken", "HTMLParser helloWorld"), (Words{"HTMLParser", " hello", "World"}));
}

TEST(PreTokenizerTest, UnicodeLettersNumbersAndWhitespace) {
  // é is \p{L}; Arabic-Indic ٣ is \p{N}; U+3000 and U+0085 are \s.
  EXPECT_EQ(SplitWith("llama-bpe", "caf\xC3\xA9 \xD9\xA3\xE3\x80\x80x\xC2\x85"),
            (Words{"caf\xC3\xA9", " ", "\xD9\xA3", "\xE3\x80\x80x", "\xC2\x85"}));
}

TEST(PreTokenizerTest, EachPatternSplitsThePiecesOfThePreviousOne) {
  EXPECT_EQ(SplitWithPatterns({"[0-9]+", "b"}, "ab12cb"), (Words{"a", "b", "12", "c", "b"}));
  // The second pattern sees "x  " alone, so (?!\S) holds after both spaces;
  // on the whole text it would not (',' follows).
  EXPECT_EQ(SplitWithPatterns({",", R"(\s+(?!\S))"}, "x  ,y"), (Words{"x", "  ", ",", "y"}));
}

TEST(PreTokenizerTest, DollarMatchesOnlyAtTheVeryEnd) {
  EXPECT_EQ(SplitWithPatterns({"b$"}, "ab\n"), (Words{"ab\n"}));
  EXPECT_EQ(SplitWithPatterns({"b$"}, "ab"), (Words{"a", "b"}));
}

TEST(PreTokenizerTest, EmptyMatchesMakeNoWords) {
  EXPECT_EQ(SplitWithPatterns({"x*"}, "axxb"), (Words{"a", "xx", "b"}));
  // An empty match still ends the text before it, as in llama.cpp.
  EXPECT_EQ(SplitWithPatterns({"(?=b)"}, "ab"), (Words{"a", "b"}));
}

TEST(PreTokenizerTest, InvalidUtf8BytesAreWordsOfTheirOwn) {
  EXPECT_EQ(SplitWith("llama-bpe",
                      "ab\xFF"
                      "cd"),
            (Words{"ab", "\xFF", "cd"}));
  EXPECT_EQ(SplitWith("llama-bpe", "\xC3\xA9\xC3"), (Words{"\xC3\xA9", "\xC3"}));
  EXPECT_EQ(SplitWith("gpt-2", "\xE2\x82 x"), (Words{"\xE2", "\x82", " x"}));
}

TEST(PreTokenizerTest, WordsAlwaysConcatenateToTheText) {
  const std::string text =
      "Mixed \t\r\n text: 12,345.67 \xF0\x9F\x98\x80\xF0\x9F\x98\x80 "
      "\xE4\xB8\x96\xE7\x95\x8C don't STOP\xFF\xFE end  ";
  for (const PreTokenizerSpec& spec : PreTokenizerSpecs()) {
    const Words words = Split(PreTokenizer(spec.patterns), text);
    std::string joined;
    for (const std::string& w : words) {
      EXPECT_FALSE(w.empty()) << spec.names[0];
      joined += w;
    }
    EXPECT_EQ(joined, text) << spec.names[0];
  }
}

TEST(PreTokenizerTest, NamesAndDefaults) {
  EXPECT_EQ(FindPreTokenizer(""), FindPreTokenizer("default"));
  EXPECT_EQ(FindPreTokenizer("llama3"), FindPreTokenizer("llama-bpe"));
  EXPECT_EQ(FindPreTokenizer("no-such-pre"), nullptr);
  EXPECT_TRUE(FindPreTokenizer("llama-bpe")->ignore_merges);
  EXPECT_TRUE(FindPreTokenizer("llama-bpe")->add_bos);
  EXPECT_TRUE(FindPreTokenizer("tekken")->add_bos);
  EXPECT_FALSE(FindPreTokenizer("dbrx")->ignore_merges);
  EXPECT_FALSE(FindPreTokenizer("qwen2")->add_bos);
  EXPECT_FALSE(FindPreTokenizer("gpt-2")->add_bos);
}

}  // namespace
}  // namespace h2o
