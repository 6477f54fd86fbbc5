// The regex stage of byte-level BPE: splits text into the words BPE merges
// within, as llama.cpp's unicode_regex_split does. Runs on PCRE2 (UTF + UCP,
// JIT-compiled), so \p{L}, \s and lookahead have their Unicode meaning.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace h2o {

// Immutable after construction; Split is thread-safe.
class PreTokenizer {
 public:
  // Compiles `patterns` (PCRE2 syntax; `$` matches only at the very end).
  // They are the program's own (pre_tokenizer_specs.cc): one that does not
  // compile is a bug and fails a check.
  explicit PreTokenizer(std::span<const std::string_view> patterns);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // Appends the words of `text` to *words, in order; they are non-empty
  // and concatenate to exactly `text`. Each pattern in turn splits every
  // current piece into its matches and the text between them (both kept),
  // seeing only that piece. Bytes that are not well-formed UTF-8 become
  // one-byte words of their own that no pattern sees (llama.cpp would
  // replace them with U+FFFD; keeping them keeps Decode exact).
  void Split(std::string_view text, std::vector<std::string_view>* words) const;

 private:
  struct Pattern;
  void SplitPiece(const Pattern& pattern, std::string_view piece,
                  std::vector<std::string_view>* out) const;

  std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace h2o
