#include "grammar/grammar_matcher.h"

#include <algorithm>

#include "core/status.h"
#include "grammar/utf8_char.h"

namespace h2o {
namespace {

void SortUnique(std::vector<GrammarMatcher::Stack>& stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
}

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)) {
  H2O_CHECK(grammar_ != nullptr);
  const GrammarRule& root = grammar_->rules[grammar_->root];
  for (size_t a = 0; a < root.alternatives.size(); ++a) {
    Expand({{grammar_->root, static_cast<int32_t>(a), 0}}, stacks_);
  }
  SortUnique(stacks_);
}

const GrammarSymbol& GrammarMatcher::Top(const Stack& stack) const {
  const Position& p = stack.back();
  return grammar_->rules[p.rule].alternatives[p.alternative][p.symbol];
}

void GrammarMatcher::Expand(Stack stack, std::vector<Stack>& out) const {
  for (;;) {
    if (stack.empty()) {
      out.push_back(std::move(stack));
      return;
    }
    const Position p = stack.back();
    const GrammarSequence& seq = grammar_->rules[p.rule].alternatives[p.alternative];
    if (p.symbol >= static_cast<int32_t>(seq.size())) {
      stack.pop_back();  // this sequence is matched: on with its parent
      continue;
    }
    const GrammarSymbol& symbol = seq[p.symbol];
    if (!symbol.is_rule()) {
      out.push_back(std::move(stack));
      return;
    }
    // Past the reference in the parent, then into each alternative. No
    // left recursion (ParseGbnf refuses it), so this ends. A parent with
    // nothing after the reference leaves the stack now (a tail call), so
    // X* and X{0,n}, rules that end by referring to themselves or the next,
    // do not deepen the stack by one level a repetition.
    stack.back().symbol += 1;
    if (stack.back().symbol >= static_cast<int32_t>(seq.size())) stack.pop_back();
    const GrammarRule& rule = grammar_->rules[symbol.rule];
    for (size_t a = 0; a + 1 < rule.alternatives.size(); ++a) {
      Stack branch = stack;
      branch.push_back({symbol.rule, static_cast<int32_t>(a), 0});
      Expand(std::move(branch), out);
    }
    stack.push_back({symbol.rule, static_cast<int32_t>(rule.alternatives.size()) - 1, 0});
  }
}

std::vector<GrammarMatcher::Stack> GrammarMatcher::Advance(const std::vector<Stack>& stacks,
                                                           uint32_t code_point) const {
  std::vector<Stack> out;
  for (const Stack& stack : stacks) {
    if (stack.empty() || !Top(stack).Matches(code_point)) continue;
    Stack next = stack;
    next.back().symbol += 1;
    Expand(std::move(next), out);
  }
  SortUnique(out);
  return out;
}

bool GrammarMatcher::Allows(std::string_view bytes) const {
  if (bytes.empty()) return false;
  std::string joined;  // only when an unfinished character waits for its bytes
  if (!partial_.empty()) joined = partial_ + std::string(bytes);
  const std::string_view text = partial_.empty() ? bytes : std::string_view(joined);
  // Advance copies only the stacks a character matches: most tokens fail on
  // their first character and copy none.
  const std::vector<Stack>* stacks = &stacks_;
  std::vector<Stack> advanced;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = DecodeUtf8Char(text, i);
    if (c.kind == Utf8Char::kInvalid) return false;
    if (c.kind == Utf8Char::kUnfinished) {
      return std::any_of(stacks->begin(), stacks->end(), [&](const Stack& s) {
        return !s.empty() && Top(s).MatchesSome(c.lo, c.hi);
      });
    }
    advanced = Advance(*stacks, c.lo);
    if (advanced.empty()) return false;
    stacks = &advanced;
    i += c.length;
  }
  return true;
}

void GrammarMatcher::Accept(std::string_view bytes) {
  const std::string text = partial_ + std::string(bytes);
  partial_.clear();
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = DecodeUtf8Char(text, i);
    H2O_CHECK(c.kind != Utf8Char::kInvalid);
    if (c.kind == Utf8Char::kUnfinished) {
      partial_ = text.substr(i);
      return;
    }
    stacks_ = Advance(stacks_, c.lo);
    i += c.length;
  }
}

bool GrammarMatcher::CanEnd() const {
  return partial_.empty() &&
         std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::MustEnd() const {
  return partial_.empty() &&
         std::all_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

}  // namespace h2o
