// SentencePiece-BPE tokenizer (the "llama" tokenizer of GGUF files and
// llama2.c), built from a Vocab.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace h2o {

class Tokenizer {
 public:
  // Requires ValidateVocab(vocab).ok() (the loaders guarantee it; checked).
  explicit Tokenizer(Vocab vocab);

  // Immutable after construction: Encode, Decode and TokenToPiece are
  // thread-safe.

  // SentencePiece-BPE: prepends a space when vocab.add_space_prefix and text
  // is non-empty, writes spaces as "▁", splits into UTF-8 characters, then
  // repeatedly merges the adjacent pair whose concatenation is a normal or
  // user-defined piece of highest score (ties: the leftmost pair). A final
  // piece that is not in the vocabulary becomes one byte token <0xXX> per
  // byte (unk_id where the byte token is missing). Any byte string is
  // accepted, valid UTF-8 or not. O(n log n) in the length of text.
  // Returns [bos_id] + pieces when add_bos; empty text gives no pieces.
  std::vector<int32_t> Encode(std::string_view text, bool add_bos) const;

  // Inverse of Encode: concatenates TokenToPiece of every id, except that
  // the first piece after BOS (or at the start) loses the one leading space
  // the dummy prefix added (when add_space_prefix). Control tokens produce
  // nothing. Ids outside [0, n_vocab()) produce nothing: validate ids from
  // users against n_vocab() before calling.
  // Decode(Encode(t, b)) == t for every byte string t without a literal "▁"
  // when the vocab has all 256 byte tokens (SentencePiece's round trip).
  std::string Decode(const std::vector<int32_t>& ids) const;

  // The text of one token for streaming output: "▁" becomes a space, a byte
  // token its raw byte (a lone part of a UTF-8 character), control and
  // unused tokens and out-of-range ids "", the unknown token " ⁇ " (as
  // SentencePiece shows it).
  std::string TokenToPiece(int32_t id) const;

  const Vocab& vocab() const { return vocab_; }
  int32_t n_vocab() const { return static_cast<int32_t>(vocab_.tokens.size()); }
  int32_t bos_id() const { return vocab_.bos_id; }
  int32_t eos_id() const { return vocab_.eos_id; }

 private:
  // Returns the id of a mergeable (normal or user-defined) piece, or -1.
  int32_t FindPiece(std::string_view piece) const;

  Vocab vocab_;
  // Open-addressing table of mergeable piece ids (-1 = empty slot), sized to
  // a power of two at most half full. Lookups of candidate pairs dominate
  // Encode, and this beats std::unordered_map by avoiding node chasing.
  std::vector<int32_t> piece_slots_;
  std::vector<uint64_t> piece_slot_hashes_;
  std::array<int32_t, 256> byte_to_id_;  // -1 where the vocab has no <0xXX>
  std::vector<std::string> piece_text_;  // TokenToPiece for every id
  // True when no mergeable piece has a "▁" after a non-"▁" byte, so Encode
  // may merge word by word (see tokenizer.cc).
  bool words_are_independent_ = true;
};

}  // namespace h2o
