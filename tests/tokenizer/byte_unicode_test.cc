// GPT-2's byte <-> character map (bytes_to_unicode in OpenAI's encoder.py):
// printable Latin-1 bytes stand for themselves, the other 68 for U+0100
// onwards in byte order: 0x00-0x20 -> U+0100-U+0120, 0x7F-0xA0 ->
// U+0121-U+0142, 0xAD -> U+0143.
#include "tokenizer/byte_unicode.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace h2o {
namespace {

TEST(ByteUnicodeTest, KnownCharacters) {
  EXPECT_EQ(ByteToUnicode('A'), "A");
  EXPECT_EQ(ByteToUnicode('!'), "!");
  EXPECT_EQ(ByteToUnicode('~'), "~");
  EXPECT_EQ(ByteToUnicode(0x00), "\xC4\x80");  // Ā U+0100
  EXPECT_EQ(ByteToUnicode('\n'), "\xC4\x8A");  // Ċ U+010A
  EXPECT_EQ(ByteToUnicode(' '), "\xC4\xA0");   // Ġ U+0120
  EXPECT_EQ(ByteToUnicode(0x7F), "\xC4\xA1");  // ġ U+0121
  EXPECT_EQ(ByteToUnicode(0xA0), "\xC5\x82");  // ł U+0142
  EXPECT_EQ(ByteToUnicode(0xA1), "\xC2\xA1");  // ¡ itself
  EXPECT_EQ(ByteToUnicode(0xAD), "\xC5\x83");  // Ń U+0143
  EXPECT_EQ(ByteToUnicode(0xE9), "\xC3\xA9");  // é itself
  EXPECT_EQ(ByteToUnicode(0xFF), "\xC3\xBF");  // ÿ itself
}

TEST(ByteUnicodeTest, EveryByteRoundTripsThroughADistinctCharacter) {
  std::set<std::string> spellings;
  for (int b = 0; b < 256; ++b) {
    const std::string_view spelling = ByteToUnicode(static_cast<uint8_t>(b));
    spellings.emplace(spelling);
    std::string bytes;
    ASSERT_TRUE(UnicodeToBytes(spelling, &bytes)) << b;
    EXPECT_EQ(bytes, std::string(1, static_cast<char>(b))) << b;
  }
  EXPECT_EQ(spellings.size(), 256u);
}

TEST(ByteUnicodeTest, DecodesWholeSpellingsAndRejectsOtherCharacters) {
  std::string bytes;
  EXPECT_TRUE(UnicodeToBytes("\xC4\xA0hello\xC4\x8A", &bytes));  // "Ġhello Ċ"
  EXPECT_EQ(bytes, " hello\n");
  bytes.clear();
  EXPECT_FALSE(UnicodeToBytes("a\xC5\x84", &bytes));  // ń U+0144: past the map
  EXPECT_EQ(bytes, "a");
  EXPECT_FALSE(UnicodeToBytes(" ", &bytes));             // a space is spelled Ġ
  EXPECT_FALSE(UnicodeToBytes("\xE2\x82\xAC", &bytes));  // €
  EXPECT_FALSE(UnicodeToBytes("\xC3", &bytes));          // not UTF-8
}

}  // namespace
}  // namespace h2o
