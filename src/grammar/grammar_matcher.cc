#include "grammar/grammar_matcher.h"

#include <algorithm>

#include "core/status.h"

namespace h2o {
namespace {

// UTF-8 decoding, one code point at a time; an unfinished character at the
// end is reported as the range of code points it could still become.
struct Decoded {
  std::vector<uint32_t> code_points;
  bool valid = true;
  bool unfinished = false;
  uint32_t lo = 0, hi = 0;  // when unfinished
  size_t unfinished_from = 0;
};

Decoded DecodeUtf8(std::string_view bytes) {
  Decoded out;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const int extra = c < 0x80    ? 0
                      : c >= 0xF8 ? -1
                      : c >= 0xF0 ? 3
                      : c >= 0xE0 ? 2
                      : c >= 0xC0 ? 1
                                  : -1;
    if (extra < 0) {
      out.valid = false;
      return out;
    }
    uint32_t v = extra == 0 ? c : c & (0x3F >> extra);
    int have = 0;
    while (have < extra && i + 1 + have < bytes.size()) {
      const auto next = static_cast<unsigned char>(bytes[i + 1 + have]);
      if ((next & 0xC0) != 0x80) {
        out.valid = false;
        return out;
      }
      v = (v << 6) | (next & 0x3F);
      ++have;
    }
    // The shortest form only (an overlong "\xC1\xBB" is not '{'), no
    // surrogates, nothing past U+10FFFF.
    static constexpr uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
    if (have < extra) {
      const int missing = extra - have;
      out.unfinished = true;
      out.unfinished_from = i;
      out.lo = std::max(v << (6 * missing), kLeast[extra]);
      out.hi = std::min((v << (6 * missing)) | ((1u << (6 * missing)) - 1), 0x10FFFFu);
      out.valid = out.lo <= out.hi;
      return out;
    }
    if (v < kLeast[extra] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
      out.valid = false;
      return out;
    }
    out.code_points.push_back(v);
    i += 1 + extra;
  }
  return out;
}

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
  const std::string joined = partial_ + std::string(bytes);
  const Decoded d = DecodeUtf8(joined);
  if (!d.valid) return false;
  // Most tokens fail on their first character: check it before copying.
  if (!d.code_points.empty()) {
    const uint32_t first = d.code_points.front();
    if (std::none_of(stacks_.begin(), stacks_.end(),
                     [&](const Stack& s) { return !s.empty() && Top(s).Matches(first); })) {
      return false;
    }
  }
  std::vector<Stack> stacks = stacks_;
  for (const uint32_t cp : d.code_points) {
    stacks = Advance(stacks, cp);
    if (stacks.empty()) return false;
  }
  if (!d.unfinished) return true;
  return std::any_of(stacks.begin(), stacks.end(),
                     [&](const Stack& s) { return !s.empty() && Top(s).MatchesSome(d.lo, d.hi); });
}

void GrammarMatcher::Accept(std::string_view bytes) {
  const std::string joined = partial_ + std::string(bytes);
  const Decoded d = DecodeUtf8(joined);
  H2O_CHECK(d.valid);
  for (const uint32_t cp : d.code_points) stacks_ = Advance(stacks_, cp);
  partial_ = d.unfinished ? joined.substr(d.unfinished_from) : std::string();
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
