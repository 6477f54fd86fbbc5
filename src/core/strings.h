// Small string helpers shared by the parsers of flags, specs and files.
#pragma once

#include <string_view>
#include <vector>

namespace h2o {

// s without leading and trailing characters from `blanks` (default: spaces
// and tabs); empty when s holds nothing else. A view into s.
std::string_view Trim(std::string_view s, std::string_view blanks = " \t");

// The comma-separated items of text, each trimmed; empty items kept ("a,,b"
// gives three). Views into text.
std::vector<std::string_view> SplitCommas(std::string_view text);

}  // namespace h2o
