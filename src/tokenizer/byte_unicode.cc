#include "tokenizer/byte_unicode.h"

#include <array>

#include "tokenizer/utf8.h"

namespace h2o {
namespace {

bool StandsForItself(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE);
}

std::string EncodeUtf8(uint32_t cp) {  // cp < 0x800: every character of the map
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  return {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
}

struct ByteMap {
  std::array<std::string, 256> spelling;  // byte -> UTF-8 of its character
  std::array<int16_t, 0x200> byte_of;     // code point -> byte, -1 outside the map

  ByteMap() {
    byte_of.fill(-1);
    uint32_t next_free = 0x100;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = StandsForItself(b) ? static_cast<uint32_t>(b) : next_free++;
      spelling[b] = EncodeUtf8(cp);
      byte_of[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteMap& Map() {
  static const ByteMap map;
  return map;
}

}  // namespace

std::string_view ByteToUnicode(uint8_t byte) { return Map().spelling[byte]; }

bool UnicodeToBytes(std::string_view spelling, std::string* out) {
  const ByteMap& map = Map();
  for (size_t i = 0; i < spelling.size();) {
    const size_t len = Utf8CharLength(spelling, i);
    if (len == 0 || len > 2) return false;
    const auto lead = static_cast<uint8_t>(spelling[i]);
    const uint32_t cp =
        len == 1 ? lead : ((lead & 0x1Fu) << 6) | (static_cast<uint8_t>(spelling[i + 1]) & 0x3Fu);
    if (cp >= map.byte_of.size() || map.byte_of[cp] < 0) return false;
    out->push_back(static_cast<char>(map.byte_of[cp]));
    i += len;
  }
  return true;
}

}  // namespace h2o
