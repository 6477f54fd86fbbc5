// Inputs made of fields split on one separator byte, so seed files stay
// readable text (FuzzedDataProvider takes integers from the end of the
// input, which hand-written seeds cannot follow).
#pragma once

#include <string_view>
#include <vector>

namespace h2o::fuzz {

// Every field, empty ones included: "a\nb\n" -> {"a", "b", ""}.
inline std::vector<std::string_view> SplitFields(std::string_view input, char separator) {
  std::vector<std::string_view> fields;
  size_t begin = 0;
  for (size_t end; (end = input.find(separator, begin)) != std::string_view::npos;
       begin = end + 1) {
    fields.push_back(input.substr(begin, end - begin));
  }
  fields.push_back(input.substr(begin));
  return fields;
}

}  // namespace h2o::fuzz
