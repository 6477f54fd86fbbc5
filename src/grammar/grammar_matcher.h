// Where a generation stands in its grammar, and which tokens may come
// next: a top-down matcher that keeps every way the text so far can be
// parsed as a stack of positions in the grammar's sequences (the
// pushdown automaton llama.cpp's grammar sampler also runs). A token may
// come next when its bytes, joined to the text so far, stay a prefix of
// something the grammar accepts; the bytes of a token may end inside a
// UTF-8 character, which the next token then finishes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace h2o {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Whether `bytes` may come next (an empty string may not: it would not
  // advance).
  bool Allows(std::string_view bytes) const;
  // Takes `bytes`, which Allows.
  void Accept(std::string_view bytes);
  // The text so far is a whole sentence of the grammar (an end of
  // generation may come now).
  bool CanEnd() const;
  // The text so far is a sentence that nothing can extend: only the end
  // may come.
  bool MustEnd() const;

  // A position: the next symbol of rules[rule].alternatives[alternative].
  struct Position {
    int32_t rule = 0, alternative = 0, symbol = 0;
    auto operator<=>(const Position&) const = default;
  };
  using Stack = std::vector<Position>;  // top at the back; empty: the end

 private:
  // Every stack `stack` becomes once its top rule references are opened,
  // each ending at a character set or empty.
  void Expand(Stack stack, std::vector<Stack>& out) const;
  // The stacks after one code point.
  std::vector<Stack> Advance(const std::vector<Stack>& stacks, uint32_t code_point) const;
  const GrammarSymbol& Top(const Stack& stack) const;

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Stack> stacks_;  // sorted, unique
  std::string partial_;        // the bytes of an unfinished UTF-8 character
};

}  // namespace h2o
