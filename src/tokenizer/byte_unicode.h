// GPT-2's reversible map between bytes and printable Unicode characters.
// Byte-level BPE vocabularies (tokenizer.ggml.model = gpt2) spell every
// token and merge in these characters, so that no token holds a space or a
// control character: the printable Latin-1 bytes ('!'..'~', '¡'..'¬',
// '®'..'ÿ') stand for themselves and the other 68 bytes, in byte order, for
// U+0100, U+0101, ... (so ' ' is 'Ġ' U+0120 and '\n' is 'Ċ' U+010A).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace h2o {

// The UTF-8 spelling of the character that stands for `byte`.
std::string_view ByteToUnicode(uint8_t byte);

// Appends the bytes that `spelling`'s characters stand for to *out. Returns
// false when spelling holds a character outside the map (then *out holds the
// bytes decoded before it).
bool UnicodeToBytes(std::string_view spelling, std::string* out);

}  // namespace h2o
