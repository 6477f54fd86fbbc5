// Checks for the SVG the eval writers emit, shared by their tests: a small
// XML well-formedness checker written independently of the writers, and a
// substring counter.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace h2o::testing {

// Returns "" when `xml` is a well-formed document as we emit them (an
// optional <?xml ...?> prolog, then one root element; no comments, CDATA
// or doctype), otherwise what is wrong. Checks: tags balanced and properly
// nested, attribute values quoted and unique per tag, no raw '<' in text
// or attributes, every '&' starting a known entity or character reference.
inline std::string XmlProblem(const std::string& xml) {
  size_t i = 0;
  const auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' ||
           c == '.';
  };
  const auto skip_space = [&] {
    while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
  };
  const auto read_name = [&] {
    const size_t start = i;
    while (i < xml.size() && is_name_char(xml[i])) ++i;
    return xml.substr(start, i - start);
  };
  // Checks character data up to (not including) `end`.
  const auto check_chars = [&](size_t end) -> std::string {
    for (size_t k = i; k < end; ++k) {
      if (xml[k] == '<') return "raw '<' at " + std::to_string(k);
      if (xml[k] != '&') continue;
      const size_t semi = xml.find(';', k);
      if (semi == std::string::npos || semi >= end) return "bare '&' at " + std::to_string(k);
      const std::string ref = xml.substr(k + 1, semi - k - 1);
      static const std::set<std::string> kEntities = {"amp", "lt", "gt", "quot", "apos"};
      const bool numeric = ref.size() > 1 && ref[0] == '#';
      if (!kEntities.count(ref) && !numeric) return "unknown entity &" + ref + ";";
    }
    return "";
  };
  if (xml.starts_with("<?xml")) {
    const size_t end = xml.find("?>");
    if (end == std::string::npos) return "unterminated prolog";
    i = end + 2;
  }
  std::vector<std::string> open;
  int roots = 0;
  while (true) {
    const size_t lt = xml.find('<', i);
    const size_t text_end = lt == std::string::npos ? xml.size() : lt;
    if (open.empty()) {
      for (size_t k = i; k < text_end; ++k) {
        if (!std::isspace(static_cast<unsigned char>(xml[k]))) return "text outside the root";
      }
    } else if (std::string p = check_chars(text_end); !p.empty()) {
      return p;
    }
    if (lt == std::string::npos) break;
    i = lt + 1;
    if (i < xml.size() && xml[i] == '/') {
      ++i;
      const std::string name = read_name();
      skip_space();
      if (i >= xml.size() || xml[i] != '>') return "bad end tag </" + name;
      if (open.empty() || open.back() != name) return "mismatched </" + name + ">";
      open.pop_back();
      ++i;
      continue;
    }
    const std::string name = read_name();
    if (name.empty()) return "bad tag start at " + std::to_string(lt);
    if (open.empty() && ++roots > 1) return "second root element <" + name + ">";
    std::set<std::string> attrs;
    while (true) {
      const size_t before = i;
      skip_space();
      if (i >= xml.size()) return "unterminated tag <" + name;
      if (xml[i] == '>' || xml.compare(i, 2, "/>") == 0) break;
      if (i == before) return "no space before attribute in <" + name;
      const std::string attr = read_name();
      if (attr.empty()) return "bad attribute in <" + name;
      if (!attrs.insert(attr).second) return "duplicate attribute " + attr;
      if (i >= xml.size() || xml[i] != '=') return "attribute " + attr + " without '='";
      ++i;
      if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\'')) {
        return "unquoted attribute " + attr;
      }
      const char quote = xml[i++];
      const size_t close = xml.find(quote, i);
      if (close == std::string::npos) return "unterminated attribute " + attr;
      if (std::string p = check_chars(close); !p.empty()) return p + " in attribute " + attr;
      i = close + 1;
    }
    if (xml[i] == '>') {
      open.push_back(name);
      ++i;
    } else {
      i += 2;  // "/>"
    }
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (roots != 1) return "no root element";
  return "";
}

inline size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

}  // namespace h2o::testing
