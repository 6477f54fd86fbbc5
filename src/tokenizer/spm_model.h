// SentencePiece-BPE (tokenizer.ggml.model = llama, and llama2.c's
// tokenizer.bin): merges by piece score.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/piece_table.h"
#include "tokenizer/tokenizer_model.h"
#include "tokenizer/vocab.h"

namespace h2o {

class SpmModel final : public TokenizerModel {
 public:
  // Requires ValidateVocab(vocab).ok() and vocab.type == kSentencePiece.
  explicit SpmModel(const Vocab& vocab);

  // Prepends a space when vocab.add_space_prefix and after_special, writes
  // spaces as "▁", splits into UTF-8 characters, then repeatedly merges the
  // adjacent pair whose concatenation is a normal or user-defined piece of
  // highest score (ties: the leftmost pair). A final piece that is not in the
  // vocabulary becomes one byte token <0xXX> per byte (unk_id where the byte
  // token is missing). Any byte string is accepted, valid UTF-8 or not.
  // O(n log n) in the length of text.
  void EncodeFragment(std::string_view text, bool after_special,
                      std::vector<int32_t>* ids) const override;

 private:
  std::vector<float> scores_;
  int32_t unk_id_;
  bool add_space_prefix_;
  PieceTable mergeable_;                 // normal and user-defined pieces; first id wins
  std::array<int32_t, 256> byte_to_id_;  // -1 where the vocab has no <0xXX>
  // True when no mergeable piece has a "▁" after a non-"▁" byte, so
  // EncodeFragment may merge word by word (see spm_model.cc).
  bool words_are_independent_ = true;
};

}  // namespace h2o
