// PCRE2 is used the way its global-matching examples (pcre2demo) do: the
// pattern is compiled once with JIT, each call matches with PCRE2_NO_UTF_CHECK
// after one validity scan of the whole text (PCRE2 would otherwise re-check
// the subject on every call, quadratic over a long text), and after an empty
// match the next attempt at the same place must be non-empty.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pre_tokenizer.h"

#include <pcre2.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/status.h"
#include "tokenizer/utf8.h"

namespace h2o {

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  ~Pattern() { pcre2_code_free(code); }
};

namespace {

// Per-thread match state, so Split needs no lock and allocates nothing per
// call. Long runs of one class (a megabyte of spaces) backtrack once per
// character: the match limit is lifted (the time stays linear) and the JIT
// stack may grow from 32 KiB to 64 MiB, which lookahead repeats need on
// multi-megabyte words.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 << 10, 64 << 20, nullptr);

  MatchState() {
    H2O_CHECK(data != nullptr && context != nullptr && stack != nullptr);
    pcre2_jit_stack_assign(context, nullptr, stack);
    pcre2_set_match_limit(context, UINT32_MAX);
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchState& ThreadMatchState() {
  thread_local MatchState state;
  return state;
}

bool IsInvalidByteWord(std::string_view piece) {
  // A one-byte piece with the high bit set cannot be a UTF-8 character.
  return piece.size() == 1 && static_cast<unsigned char>(piece[0]) >= 0x80;
}

// Appends the well-formed runs of text and each ill-formed byte as pieces.
void SplitAtInvalidUtf8(std::string_view text, std::vector<std::string_view>* pieces) {
  while (!text.empty()) {
    const size_t bad = FindInvalidUtf8(text);
    if (bad == std::string_view::npos) {
      pieces->push_back(text);
      return;
    }
    if (bad > 0) pieces->push_back(text.substr(0, bad));
    pieces->push_back(text.substr(bad, 1));
    text.remove_prefix(bad + 1);
  }
}

}  // namespace

PreTokenizer::PreTokenizer(std::span<const std::string_view> patterns) {
  for (std::string_view source : patterns) {
    auto pattern = std::make_unique<Pattern>();
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    pattern->code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error, &error_offset, nullptr);
    if (pattern->code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      std::fprintf(stderr, "h2o: pre-tokenizer pattern '%.*s' at %zu: %s\n",
                   static_cast<int>(source.size()), source.data(), error_offset,
                   reinterpret_cast<const char*>(message));
    }
    H2O_CHECK(pattern->code != nullptr);
    // Without JIT support PCRE2 interprets the pattern: slower, same words.
    pcre2_jit_compile(pattern->code, PCRE2_JIT_COMPLETE);
    patterns_.push_back(std::move(pattern));
  }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

void PreTokenizer::SplitPiece(const Pattern& pattern, std::string_view piece,
                              std::vector<std::string_view>* out) const {
  if (IsInvalidByteWord(piece)) {
    out->push_back(piece);
    return;
  }
  MatchState& state = ThreadMatchState();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  const size_t n = piece.size();
  size_t kept = 0;  // piece[0, kept) is already in *out
  size_t from = 0;
  uint32_t options = 0;
  while (from <= n) {
    const int rc = pcre2_match(pattern.code, subject, n, from, options | PCRE2_NO_UTF_CHECK,
                               state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH && options != 0) {
      // No non-empty match where the empty one was: step one character on.
      options = 0;
      from += from < n ? Utf8CharLength(piece, from) : 1;
      continue;
    }
    // No more matches, or a PCRE2 resource limit on pathological input:
    // the rest of the piece stays one word either way.
    if (rc < 0) break;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    const size_t begin = ovector[0], end = ovector[1];
    if (begin > kept) out->push_back(piece.substr(kept, begin - kept));
    if (end > begin) out->push_back(piece.substr(begin, end - begin));
    kept = end;
    from = end;
    options = end == begin ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
  }
  if (kept < n) out->push_back(piece.substr(kept));
}

void PreTokenizer::Split(std::string_view text, std::vector<std::string_view>* words) const {
  if (text.empty()) return;
  std::vector<std::string_view> pieces, next;
  SplitAtInvalidUtf8(text, &pieces);
  for (size_t p = 0; p < patterns_.size(); ++p) {
    // The last pattern writes straight into *words.
    std::vector<std::string_view>* out = p + 1 == patterns_.size() ? words : &next;
    for (std::string_view piece : pieces) SplitPiece(*patterns_[p], piece, out);
    if (out == &next) {
      pieces.swap(next);
      next.clear();
    }
  }
  if (patterns_.empty()) words->insert(words->end(), pieces.begin(), pieces.end());
}

}  // namespace h2o
