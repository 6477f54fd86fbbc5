// Small string helpers shared by the parsers of flags, specs and files.
#pragma once

#include <string_view>

namespace h2o {

// s without leading and trailing characters from `blanks` (default: spaces
// and tabs); empty when s holds nothing else. A view into s.
std::string_view Trim(std::string_view s, std::string_view blanks = " \t");

}  // namespace h2o
