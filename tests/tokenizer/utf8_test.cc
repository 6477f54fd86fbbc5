#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace h2o {
namespace {

TEST(Utf8Test, LengthsOfWellFormedCharacters) {
  EXPECT_EQ(Utf8CharLength("a", 0), 1u);
  EXPECT_EQ(Utf8CharLength(std::string(1, '\0'), 0), 1u);
  EXPECT_EQ(Utf8CharLength("\xC3\xA9", 0), 2u);          // é U+00E9
  EXPECT_EQ(Utf8CharLength("\xE2\x82\xAC", 0), 3u);      // € U+20AC
  EXPECT_EQ(Utf8CharLength("\xF0\x9F\x98\x80", 0), 4u);  // 😀 U+1F600
  EXPECT_EQ(Utf8CharLength("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF, the last
  EXPECT_EQ(Utf8CharLength("x\xC3\xA9", 1), 2u);
}

TEST(Utf8Test, IllFormedSequencesHaveLengthZero) {
  EXPECT_EQ(Utf8CharLength("\x80", 0), 0u);              // stray continuation
  EXPECT_EQ(Utf8CharLength("\xC3", 0), 0u);              // truncated
  EXPECT_EQ(Utf8CharLength("\xC3x", 0), 0u);             // not a continuation
  EXPECT_EQ(Utf8CharLength("\xC0\x80", 0), 0u);          // overlong NUL
  EXPECT_EQ(Utf8CharLength("\xE0\x80\xAF", 0), 0u);      // overlong '/'
  EXPECT_EQ(Utf8CharLength("\xED\xA0\x80", 0), 0u);      // surrogate U+D800
  EXPECT_EQ(Utf8CharLength("\xF4\x90\x80\x80", 0), 0u);  // U+110000
  EXPECT_EQ(Utf8CharLength("\xF8\x88\x80\x80\x80", 0), 0u);
  EXPECT_EQ(Utf8CharLength("\xFF", 0), 0u);
}

TEST(Utf8Test, FindsTheFirstInvalidByte) {
  EXPECT_EQ(FindInvalidUtf8(""), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("plain ASCII text, longer than eight bytes"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("caf\xC3\xA9 \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("0123456789abcdef\xFFtail"), 16u);
  EXPECT_EQ(FindInvalidUtf8("caf\xC3\xA9\xC3"), 5u);
}

TEST(Utf8Test, CheckNamesWhereAndTheByte) {
  EXPECT_TRUE(CheckUtf8("fine \xE2\x82\xAC", "--prompt").ok());
  const Status s = CheckUtf8("ab\xFE", "notes.txt");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "notes.txt: invalid UTF-8 at byte 2 (0xfe)");
}

}  // namespace
}  // namespace h2o
