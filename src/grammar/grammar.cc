#include "grammar/grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "grammar/utf8_char.h"

namespace h2o {

bool GrammarSymbol::Matches(uint32_t code_point) const {
  return MatchesSome(code_point, code_point);
}

bool GrammarSymbol::MatchesSome(uint32_t lo, uint32_t hi) const {
  if (!negated) {
    for (const auto& [a, b] : ranges) {
      if (a <= hi && lo <= b) return true;
    }
    return false;
  }
  // Negated: some code point of [lo, hi] lies outside every range.
  uint32_t next = lo;  // the lowest code point not yet known to be excluded
  std::vector<std::pair<uint32_t, uint32_t>> sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [a, b] : sorted) {
    if (a > next) break;
    if (b >= next) {
      if (b >= hi) return false;
      next = b + 1;
    }
  }
  return next <= hi;
}

namespace {

constexpr int64_t kMaxRepeat = 10000;
// Symbols all rules may hold once repetitions are expanded: nested bounds
// multiply ("a"{10000}{10000}), and a request must not take the memory.
constexpr int64_t kMaxSymbols = 1 << 20;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Grammar> Parse() {
    SkipSpace(/*newlines=*/true);
    while (pos_ < text_.size()) {
      H2O_RETURN_IF_ERROR(ParseRule());
      SkipSpace(/*newlines=*/true);
    }
    for (size_t i = 0; i < grammar_.rules.size(); ++i) {
      if (!defined_[i]) {
        return Status::Error(
            fmt::format("grammar: rule '{}' is used but never defined", grammar_.rules[i].name));
      }
    }
    const auto root = names_.find("root");
    if (root == names_.end()) return Status::Error("grammar: no 'root' rule");
    grammar_.root = root->second;
    H2O_RETURN_IF_ERROR(CheckLeftRecursion());
    return std::move(grammar_);
  }

 private:
  Status Error(const std::string& what) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Status::Error(fmt::format("grammar: line {}, column {}: {}", line, column, what));
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace(bool newlines) {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == '#') {
        while (!AtEnd() && Peek() != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  static bool IsNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  }

  std::string ParseName() {
    const size_t begin = pos_;
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }

  int32_t RuleId(const std::string& name) {
    auto [it, added] = names_.try_emplace(name, static_cast<int32_t>(grammar_.rules.size()));
    if (added) {
      grammar_.rules.push_back({name, {}});
      defined_.push_back(false);
    }
    return it->second;
  }

  int32_t NewRule(const std::string& base) {
    std::string name;
    do {
      name = fmt::format("{}-{}", base, ++generated_);
    } while (names_.count(name) != 0);
    const int32_t id = RuleId(name);
    defined_[id] = true;
    return id;
  }

  Status ParseRule() {
    const std::string name = ParseName();
    if (name.empty()) return Error("expected a rule name");
    SkipSpace(false);
    if (text_.substr(pos_, 3) != "::=") return Error("expected '::=' after '" + name + "'");
    pos_ += 3;
    SkipSpace(/*newlines=*/true);  // the body may begin on the next line
    const int32_t id = RuleId(name);
    if (defined_[id]) return Error("rule '" + name + "' is defined twice");
    defined_[id] = true;
    current_ = name;
    auto alternatives = ParseAlternatives(/*nested=*/false);
    if (!alternatives.ok()) return alternatives.status();
    grammar_.rules[id].alternatives = std::move(alternatives).value();
    if (!AtEnd() && Peek() != '\n') return Error("expected the end of the line");
    return Status::Ok();
  }

  Result<std::vector<GrammarSequence>> ParseAlternatives(bool nested) {
    std::vector<GrammarSequence> out;
    for (;;) {
      auto sequence = ParseSequence(nested);
      if (!sequence.ok()) return sequence.status();
      out.push_back(std::move(sequence).value());
      SkipSpace(nested);
      if (!nested && Peek() == '\n') {
        // A rule's next alternative may open the next line with '|'.
        const size_t line_end = pos_;
        SkipSpace(/*newlines=*/true);
        if (Peek() != '|') pos_ = line_end;
      }
      if (Peek() != '|') return out;
      ++pos_;
      SkipSpace(/*newlines=*/true);  // an alternative may start on the next line
    }
  }

  Result<GrammarSequence> ParseSequence(bool nested) {
    GrammarSequence sequence;
    size_t last_start = 0;  // where the last element's symbols begin
    for (;;) {
      SkipSpace(nested);
      const char c = Peek();
      if (AtEnd() || c == '|' || c == ')' || c == '\n') return sequence;
      if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (last_start == sequence.size()) return Error("a repetition needs something before it");
        H2O_RETURN_IF_ERROR(ParseRepetition(sequence, last_start));
        continue;
      }
      last_start = sequence.size();
      if (c == '"') {
        ++pos_;
        while (Peek() != '"') {
          if (AtEnd() || Peek() == '\n') return Error("unterminated string literal");
          auto cp = ParseChar();
          if (!cp.ok()) return cp.status();
          sequence.push_back({-1, false, {{*cp, *cp}}});
        }
        ++pos_;
      } else if (c == '[') {
        ++pos_;
        GrammarSymbol set;
        if (Peek() == '^') {
          set.negated = true;
          ++pos_;
        }
        while (Peek() != ']') {
          if (AtEnd() || Peek() == '\n') return Error("unterminated character class");
          auto lo = ParseChar();
          if (!lo.ok()) return lo.status();
          uint32_t hi = *lo;
          if (Peek() == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
            ++pos_;
            auto end = ParseChar();
            if (!end.ok()) return end.status();
            hi = *end;
            if (hi < *lo) return Error("a character range runs backwards");
          }
          set.ranges.emplace_back(*lo, hi);
        }
        ++pos_;
        sequence.push_back(std::move(set));
      } else if (c == '.') {
        ++pos_;
        sequence.push_back({-1, true, {}});  // nothing excluded: any character
      } else if (c == '(') {
        ++pos_;
        SkipSpace(true);
        auto alternatives = ParseAlternatives(/*nested=*/true);
        if (!alternatives.ok()) return alternatives.status();
        SkipSpace(true);
        if (Peek() != ')') return Error("expected ')'");
        ++pos_;
        const int32_t group = NewRule(current_);
        grammar_.rules[group].alternatives = std::move(alternatives).value();
        sequence.push_back({group, false, {}});
      } else if (IsNameChar(c)) {
        const std::string name = ParseName();
        sequence.push_back({RuleId(name), false, {}});
      } else {
        return Error(fmt::format("unexpected '{}'", c));
      }
    }
  }

  // Rewrites the element sequence[from..] repeated as asked, with rules:
  // X{m,n} is m copies of X and then n - m nested optional ones (X*: a
  // rule that repeats itself).
  Status ParseRepetition(GrammarSequence& sequence, size_t from) {
    int64_t min = 0, max = -1;  // -1: unbounded
    const char c = Peek();
    ++pos_;
    if (c == '+') {
      min = 1;
    } else if (c == '?') {
      max = 1;
    } else if (c == '{') {
      SkipSpace(false);
      auto m = ParseCount();
      if (!m) return Error("expected a number after '{'");
      min = *m;
      SkipSpace(false);
      if (Peek() == ',') {
        ++pos_;
        SkipSpace(false);
        if (Peek() != '}') {
          auto n = ParseCount();
          if (!n) return Error("expected a number or '}' after ','");
          max = *n;
        }
      } else {
        max = min;
      }
      SkipSpace(false);
      if (Peek() != '}') return Error("expected '}'");
      ++pos_;
      if (min > kMaxRepeat || max > kMaxRepeat) {
        return Error(fmt::format("a repetition bound is over {}", kMaxRepeat));
      }
      if (max >= 0 && max < min) return Error("a repetition's maximum is below its minimum");
    }
    const GrammarSequence item(sequence.begin() + static_cast<std::ptrdiff_t>(from),
                               sequence.end());
    const int64_t copies = std::max<int64_t>(min, max) + 1;
    expanded_ += copies * static_cast<int64_t>(item.size());
    if (expanded_ > kMaxSymbols) {
      return Error(fmt::format(
          "the grammar grows past {} symbols once its repetitions are expanded", kMaxSymbols));
    }
    sequence.resize(from);
    for (int64_t i = 0; i < min; ++i) sequence.insert(sequence.end(), item.begin(), item.end());
    if (max < 0) {
      const int32_t star = NewRule(current_);
      GrammarSequence again = item;
      again.push_back({star, false, {}});
      grammar_.rules[star].alternatives = {std::move(again), {}};
      sequence.push_back({star, false, {}});
    } else if (max > min) {
      // opt_k ::= X opt_{k+1} | (empty), built from the innermost out.
      int32_t inner = -1;
      for (int64_t k = max - min; k >= 1; --k) {
        const int32_t opt = NewRule(current_);
        GrammarSequence some = item;
        if (inner >= 0) some.push_back({inner, false, {}});
        grammar_.rules[opt].alternatives = {std::move(some), {}};
        inner = opt;
      }
      sequence.push_back({inner, false, {}});
    }
    return Status::Ok();
  }

  std::optional<int64_t> ParseCount() {
    const size_t begin = pos_;
    int64_t v = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9' && v <= kMaxRepeat) {
      v = v * 10 + (Peek() - '0');
      ++pos_;
    }
    if (pos_ == begin) return std::nullopt;
    return v;
  }

  Result<uint32_t> ParseHex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = Peek();
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) return Error(fmt::format("expected {} hex digits", digits));
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > 0x10FFFF) return Error("a code point above U+10FFFF");
    return v;
  }

  // One character of a literal or class, escapes decoded, UTF-8 read.
  Result<uint32_t> ParseChar() {
    const auto c = static_cast<unsigned char>(Peek());
    ++pos_;
    if (c == '\\') {
      const char e = Peek();
      ++pos_;
      switch (e) {
        case 'n':
          return uint32_t{'\n'};
        case 'r':
          return uint32_t{'\r'};
        case 't':
          return uint32_t{'\t'};
        case 'x':
          return ParseHex(2);
        case 'u':
          return ParseHex(4);
        case 'U':
          return ParseHex(8);
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
        case '/':
          return static_cast<uint32_t>(e);
        default:
          return Error(fmt::format("unknown escape '\\{}'", e));
      }
    }
    if (c < 0x80) return static_cast<uint32_t>(c);
    const Utf8Char u = DecodeUtf8Char(text_, pos_ - 1);
    if (u.kind != Utf8Char::kWhole) return Error("invalid UTF-8");
    pos_ += u.length - 1;
    return u.lo;
  }

  Status CheckLeftRecursion() const {
    const size_t n = grammar_.rules.size();
    // Nullable rules (can match nothing), to a fixed point.
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        for (const GrammarSequence& s : grammar_.rules[r].alternatives) {
          if (std::all_of(s.begin(), s.end(), [&](const GrammarSymbol& x) {
                return x.is_rule() && nullable[x.rule];
              })) {
            nullable[r] = changed = true;
            break;
          }
        }
      }
    }
    // r -> q when q can come first in r; a cycle is left recursion.
    std::vector<std::vector<int32_t>> first(n);
    for (size_t r = 0; r < n; ++r) {
      for (const GrammarSequence& s : grammar_.rules[r].alternatives) {
        for (const GrammarSymbol& x : s) {
          if (!x.is_rule()) break;
          first[r].push_back(x.rule);
          if (!nullable[x.rule]) break;
        }
      }
    }
    std::vector<int> mark(n, 0);  // 0 new, 1 on the path, 2 done
    std::function<int32_t(int32_t)> visit = [&](int32_t r) -> int32_t {
      mark[r] = 1;
      for (int32_t q : first[r]) {
        if (mark[q] == 1) return q;
        if (mark[q] == 0) {
          if (const int32_t found = visit(q); found >= 0) return found;
        }
      }
      mark[r] = 2;
      return -1;
    };
    for (size_t r = 0; r < n; ++r) {
      if (mark[r] != 0) continue;
      if (const int32_t found = visit(static_cast<int32_t>(r)); found >= 0) {
        return Status::Error(fmt::format(
            "grammar: rule '{}' is left-recursive (it can reach itself before any character)",
            grammar_.rules[found].name));
      }
    }
    return Status::Ok();
  }

  std::string_view text_;
  size_t pos_ = 0;
  Grammar grammar_;
  std::map<std::string, int32_t> names_;
  std::vector<bool> defined_;
  std::string current_;  // the rule being parsed, for generated names
  int generated_ = 0;
  int64_t expanded_ = 0;  // symbols repetitions have written
};

}  // namespace

Result<Grammar> ParseGbnf(std::string_view text) { return Parser(text).Parse(); }

}  // namespace h2o
