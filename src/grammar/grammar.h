// A context-free grammar over Unicode code points, written in llama.cpp's
// GBNF (grammars/README.md there): what `grammar` requests, --grammar-file
// and the JSON-schema conversion (grammar/json_schema.h) constrain
// sampling with (grammar/grammar_matcher.h).
//
//   root   ::= "{" ws pair ("," ws pair)* "}"     # rules; "root" starts
//   pair   ::= [a-z]+ ws ":" ws ("true" | "false")
//   ws     ::= [ \t\n]{0,8}
//
// Literals "..." and character classes [...] ([^...] negated, a-z ranges)
// take the escapes \n \r \t \\ \" \[ \] \- \xHH \uHHHH \UHHHHHHHH; `.` is
// any character; ( ) groups; postfix * + ? {m} {m,} {m,n} repeat; # starts
// a comment. A rule ends at a newline outside parentheses. Repetition is
// expanded into plain rules when parsing, so the matcher sees only
// sequences of character sets and rule references.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace h2o {

struct GrammarSymbol {
  // A character set (inclusive code-point ranges, negated or not), or a
  // reference to rules[rule].
  int32_t rule = -1;  // >= 0: a rule reference
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;

  bool is_rule() const { return rule >= 0; }
  bool Matches(uint32_t code_point) const;
  // Whether some code point in [lo, hi] matches (an unfinished UTF-8
  // character narrows the code point to such a range).
  bool MatchesSome(uint32_t lo, uint32_t hi) const;
};

using GrammarSequence = std::vector<GrammarSymbol>;

struct GrammarRule {
  std::string name;  // as written; generated rules are "name-N"
  std::vector<GrammarSequence> alternatives;
};

struct Grammar {
  std::vector<GrammarRule> rules;
  int32_t root = 0;
};

// Errors, one line naming the line and column: a syntax error, a rule
// defined twice, a reference to a rule never defined, no "root" rule, a
// repetition bound over 10000, and left recursion (a rule that can reach
// itself before consuming a character), which no top-down matcher ends on.
Result<Grammar> ParseGbnf(std::string_view text);

}  // namespace h2o
