#include "tokenizer/utf8.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace h2o {

size_t Utf8CharLength(std::string_view text, size_t offset) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[offset + i]); };
  const size_t left = text.size() - offset;
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  // The second byte's range depends on the lead: it is where the overlong,
  // surrogate and beyond-U+10FFFF forms are excluded (RFC 3629, table 3-7
  // of the Unicode standard).
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (left < len || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return len;
}

size_t FindInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // ASCII runs dominate most text: skip eight bytes at a time.
    while (i + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i == text.size()) break;
    const size_t len = Utf8CharLength(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

Status CheckUtf8(std::string_view text, std::string_view where) {
  const size_t bad = FindInvalidUtf8(text);
  if (bad == std::string_view::npos) return Status::Ok();
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
  return Status::Error(std::string(where) + ": invalid UTF-8 at byte " + std::to_string(bad) +
                       " (" + byte + ")");
}

}  // namespace h2o
