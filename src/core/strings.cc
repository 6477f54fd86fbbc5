#include "core/strings.h"

namespace h2o {

std::string_view Trim(std::string_view s, std::string_view blanks) {
  const size_t first = s.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> items;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    items.push_back(Trim(text.substr(begin, comma == text.npos ? text.npos : comma - begin)));
    if (comma == text.npos) return items;
    begin = comma + 1;
  }
}

}  // namespace h2o
