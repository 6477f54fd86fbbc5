// One UTF-8 character at a time, for the grammar's parser (its literals
// and classes) and its matcher (token bytes, which may end inside a
// character that the next token finishes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace h2o {

struct Utf8Char {
  enum Kind { kWhole, kUnfinished, kInvalid } kind = kInvalid;
  // kWhole: lo == hi, the code point. kUnfinished: the code points the
  // character can still become once its missing bytes come.
  uint32_t lo = 0, hi = 0;
  size_t length = 0;  // bytes read: the character's, or what is there of it
};

// The character that starts at text[offset] (offset < text.size()). Only
// the shortest form of a code point is valid (an overlong "\xC1\xBB" is not
// '{'); so are no surrogates and nothing past U+10FFFF.
Utf8Char DecodeUtf8Char(std::string_view text, size_t offset);

}  // namespace h2o
