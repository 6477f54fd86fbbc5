// Finds the special tokens written in a text (llama.cpp's parse_special):
// control, user-defined and unknown tokens are cut out before the tokenizer
// model sees the text around them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace h2o {

struct TextFragment {
  std::string_view text;  // empty when this fragment is a special token
  int32_t special_id;     // -1 when this fragment is text
};

// Immutable after construction; Split is thread-safe.
class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const Vocab& vocab);

  // Appends the fragments of text to *out in order: non-empty runs of text
  // and special tokens. As llama.cpp's tokenizer_st_partition: the longest
  // special tokens are cut out first (equal lengths: lower id first), each
  // at its occurrences from left to right that lie wholly in text no longer
  // token has taken.
  void Split(std::string_view text, std::vector<TextFragment>* out) const;

 private:
  std::vector<std::string> texts_;  // in priority order
  std::vector<int32_t> ids_;
  // For each first byte, the priorities (indexes into texts_) of the
  // specials that start with it, in priority order.
  std::vector<std::vector<uint32_t>> by_first_byte_;
};

}  // namespace h2o
