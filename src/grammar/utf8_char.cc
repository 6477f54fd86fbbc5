#include "grammar/utf8_char.h"

#include <algorithm>

namespace h2o {

Utf8Char DecodeUtf8Char(std::string_view text, size_t offset) {
  const auto lead = static_cast<unsigned char>(text[offset]);
  const int extra = lead < 0x80    ? 0
                    : lead >= 0xF8 ? -1
                    : lead >= 0xF0 ? 3
                    : lead >= 0xE0 ? 2
                    : lead >= 0xC0 ? 1
                                   : -1;
  if (extra < 0) return {};
  uint32_t v = extra == 0 ? lead : lead & (0x3F >> extra);
  int have = 0;
  while (have < extra && offset + 1 + have < text.size()) {
    const auto next = static_cast<unsigned char>(text[offset + 1 + have]);
    if ((next & 0xC0) != 0x80) return {};
    v = (v << 6) | (next & 0x3F);
    ++have;
  }
  static constexpr uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
  const size_t length = static_cast<size_t>(1 + have);
  if (have < extra) {
    const int missing = 6 * (extra - have);
    const uint32_t lo = std::max(v << missing, kLeast[extra]);
    const uint32_t hi = std::min((v << missing) | ((1u << missing) - 1), 0x10FFFFu);
    if (lo > hi) return {};
    return {Utf8Char::kUnfinished, lo, hi, length};
  }
  if (v < kLeast[extra] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return {};
  return {Utf8Char::kWhole, v, v, length};
}

}  // namespace h2o
