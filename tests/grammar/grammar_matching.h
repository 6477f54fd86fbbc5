// Feeding a grammar a text in pieces, as tokens would come.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "grammar/grammar_matcher.h"

namespace h2o::testing {

// Whether the grammar takes every piece in turn (each a prefix of a
// sentence) and ends a sentence after the last.
inline bool Takes(const std::shared_ptr<const Grammar>& grammar,
                  const std::vector<std::string>& pieces, bool must_be_whole = true) {
  GrammarMatcher m(grammar);
  for (const std::string& piece : pieces) {
    if (!m.Allows(piece)) return false;
    m.Accept(piece);
  }
  return !must_be_whole || m.CanEnd();
}

// The text one byte at a time.
inline bool TakesBytes(const std::shared_ptr<const Grammar>& grammar, const std::string& text) {
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  return Takes(grammar, bytes);
}

}  // namespace h2o::testing
