// GBNF: the parser's rules and errors, and the matcher against texts whose
// membership is plain by hand, fed whole, byte by byte and in pieces that
// split UTF-8 characters.
#include "grammar/grammar.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "grammar/grammar_matching.h"

namespace h2o {
namespace {

using testing::Takes;
using testing::TakesBytes;

std::shared_ptr<const Grammar> Parse(const std::string& text) {
  auto g = ParseGbnf(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::make_shared<const Grammar>(std::move(g).value()) : nullptr;
}

std::string ErrorOf(const std::string& text) {
  auto g = ParseGbnf(text);
  return g.ok() ? "(parsed)" : g.status().message();
}

TEST(GbnfTest, LiteralsAlternativesAndRules) {
  auto g = Parse("root ::= greeting \" \" name\ngreeting ::= \"hi\" | \"hello\"\nname ::= \"bob\"");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, "hi bob"));
  EXPECT_TRUE(TakesBytes(g, "hello bob"));
  EXPECT_FALSE(TakesBytes(g, "hey bob"));
  EXPECT_FALSE(TakesBytes(g, "hi bo"));  // a prefix, not a sentence
  EXPECT_TRUE(Takes(g, {"hi bo"}, /*must_be_whole=*/false));
  EXPECT_TRUE(Takes(g, {"hel", "lo b", "ob"}));
}

TEST(GbnfTest, CharacterClassesRangesAndNegation) {
  auto g = Parse(R"(root ::= [a-c] [^0-9\n] [\x41-\x43\-] .)");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, "bxA!"));
  EXPECT_TRUE(TakesBytes(g, "c--z"));
  EXPECT_FALSE(TakesBytes(g, "dxA!"));   // d outside [a-c]
  EXPECT_FALSE(TakesBytes(g, "b5A!"));   // a digit, negated out
  EXPECT_FALSE(TakesBytes(g, "b\nA!"));  // newline, negated out
  EXPECT_FALSE(TakesBytes(g, "bxD!"));   // D past C
}

TEST(GbnfTest, Repetitions) {
  auto g = Parse("root ::= \"a\"{2,3} \"b\"+ \"c\"? \"d\"* (\"x\" \"y\"){1,}");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, "aabxy"));
  EXPECT_TRUE(TakesBytes(g, "aaabbbcdddxyxy"));
  EXPECT_FALSE(TakesBytes(g, "abxy"));     // one a
  EXPECT_FALSE(TakesBytes(g, "aaaabxy"));  // four a
  EXPECT_FALSE(TakesBytes(g, "aaxy"));     // no b
  EXPECT_FALSE(TakesBytes(g, "aabccxy"));  // two c
  EXPECT_FALSE(TakesBytes(g, "aab"));      // no xy
  auto exact = Parse("root ::= [0-9]{3}");
  EXPECT_TRUE(TakesBytes(exact, "123"));
  EXPECT_FALSE(TakesBytes(exact, "12"));
  EXPECT_FALSE(TakesBytes(exact, "1234"));
}

TEST(GbnfTest, CommentsNewlinesAndNestedGroups) {
  auto g = Parse(
      "# a list\n"
      "root ::= \"[\" (item (\",\" item)*)? \"]\"   # items\n"
      "item ::= \"x\"\n"
      "       | \"y\" ( \"z\"\n"
      "               | \"w\" )\n");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, "[]"));
  EXPECT_TRUE(TakesBytes(g, "[x,yz,yw]"));
  EXPECT_FALSE(TakesBytes(g, "[x,]"));
  EXPECT_FALSE(TakesBytes(g, "[y]"));
}

TEST(GbnfTest, UnicodeEvenWhenAPieceEndsInsideACharacter) {
  auto g = Parse("root ::= \"caf\" [\\u00e0-\\u00ff] [α-ω]+");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g,
                         "café"
                         "λ"));
  EXPECT_TRUE(Takes(g, {"caf\xC3", "\xA9\xCE", "\xBB"}));  // é and λ split across pieces
  EXPECT_FALSE(Takes(g, {"caf\xC3", "\x80"}));             // À: below the range
  // The first byte of a character the class cannot hold is refused at once.
  EXPECT_FALSE(Takes(g, {"caf\xE2"}, /*must_be_whole=*/false));
  EXPECT_FALSE(Takes(g, {"caf\xFF"}, /*must_be_whole=*/false));  // not UTF-8
  // Only the shortest form of a character is that character: "\xC1\xBB"
  // would be '{' written long.
  auto brace = Parse("root ::= \"{\" \"}\"");
  EXPECT_TRUE(Takes(brace, {"{", "}"}));
  EXPECT_FALSE(Takes(brace, {"\xC1\xBB", "}"}));
  EXPECT_FALSE(Takes(brace, {"\xC1"}, /*must_be_whole=*/false));
  EXPECT_FALSE(Takes(brace, {"{", "\xE0\x81\xBD"}));
  EXPECT_FALSE(Takes(brace, {"{", "\xE0\x81"}, /*must_be_whole=*/false));
}

TEST(GbnfTest, EndsAndMustEnd) {
  auto g = Parse("root ::= \"a\" \"b\"?");
  ASSERT_NE(g, nullptr);
  GrammarMatcher m(g);
  EXPECT_FALSE(m.CanEnd());
  EXPECT_FALSE(m.Allows(""));
  m.Accept("a");
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.MustEnd());  // "b" may still come
  m.Accept("b");
  EXPECT_TRUE(m.MustEnd());
  EXPECT_FALSE(m.Allows("b"));
}

TEST(GbnfTest, RecursionThatConsumesFirstIsFine) {
  auto g = Parse("root ::= \"(\" root \")\" | \"x\"");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(TakesBytes(g, "((x))"));
  EXPECT_FALSE(TakesBytes(g, "((x)"));
}

TEST(GbnfTest, Errors) {
  EXPECT_EQ(ErrorOf("root ::= item"), "grammar: rule 'item' is used but never defined");
  EXPECT_EQ(ErrorOf("start ::= \"a\""), "grammar: no 'root' rule");
  EXPECT_EQ(ErrorOf("root ::= root \"a\" | \"b\""),
            "grammar: rule 'root' is left-recursive (it can reach itself before any character)");
  EXPECT_EQ(ErrorOf("root ::= x\nx ::= y? root\ny ::= \"a\""),
            "grammar: rule 'root' is left-recursive (it can reach itself before any character)");
  EXPECT_EQ(ErrorOf("root ::= \"a\"\nroot ::= \"b\""),
            "grammar: line 2, column 10: rule 'root' is defined twice");
  EXPECT_EQ(ErrorOf("root ::= \"abc"), "grammar: line 1, column 14: unterminated string literal");
  EXPECT_EQ(ErrorOf("root ::= [a-"), "grammar: line 1, column 13: unterminated character class");
  EXPECT_EQ(ErrorOf("root ::= \"\\q\""), "grammar: line 1, column 13: unknown escape '\\q'");
  EXPECT_EQ(ErrorOf("root ::= \"a\"{3,2}"),
            "grammar: line 1, column 18: a repetition's maximum is below its minimum");
  EXPECT_EQ(ErrorOf("root ::= \"a\"{20000}"),
            "grammar: line 1, column 20: a repetition bound is over 10000");
  EXPECT_EQ(ErrorOf("root ::= \"a\"{10000}{10000}"),
            "grammar: line 1, column 27: the grammar grows past 1048576 symbols once its "
            "repetitions are expanded");
  EXPECT_EQ(ErrorOf("root = \"a\""), "grammar: line 1, column 6: expected '::=' after 'root'");
  EXPECT_EQ(ErrorOf("root ::= * \"a\""),
            "grammar: line 1, column 10: a repetition needs something before it");
}

}  // namespace
}  // namespace h2o
