// UTF-8 well-formedness, for the pre-tokenizer (PCRE2 may only see valid
// UTF-8) and for the CLI's input checks.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/status.h"

namespace h2o {

// Length in bytes (1-4) of the well-formed UTF-8 character that starts at
// text[offset], or 0 when the bytes there are not one: a stray continuation
// byte, a truncated sequence, an overlong form, a surrogate (U+D800-DFFF) or
// a code point above U+10FFFF (RFC 3629). Requires offset < text.size().
size_t Utf8CharLength(std::string_view text, size_t offset);

// Offset of the first byte of text that does not start a well-formed
// character (see Utf8CharLength), or std::string_view::npos when all of
// text is well-formed UTF-8.
size_t FindInvalidUtf8(std::string_view text);

// Ok when text is well-formed UTF-8; otherwise "where: invalid UTF-8 at byte
// N (0xFF)", N counted from 0. The tokenizer accepts any bytes; this is for
// inputs, where ill-formed text is more likely a wrong file than intended.
Status CheckUtf8(std::string_view text, std::string_view where);

}  // namespace h2o
