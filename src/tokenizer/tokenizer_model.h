// What the two tokenizer algorithms implement for Tokenizer (tokenizer.h):
// turning a fragment of text that holds no special token into ids.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace h2o {

// Implementations are immutable after construction and thread-safe.
class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;

  // Appends the ids of `text` (non-empty; any bytes) to *ids.
  // `after_special`: text starts the input or follows a special token
  // (SentencePiece then adds its dummy-prefix space).
  virtual void EncodeFragment(std::string_view text, bool after_special,
                              std::vector<int32_t>* ids) const = 0;
};

}  // namespace h2o
