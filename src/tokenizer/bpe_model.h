// Byte-level BPE (tokenizer.ggml.model = gpt2): the pre-tokenizer named by
// tokenizer.ggml.pre splits text into words, then BPE merges each word's
// bytes by merge rank (tokenizer.ggml.merges), as llama.cpp's
// llm_tokenizer_bpe does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/piece_table.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer_model.h"
#include "tokenizer/vocab.h"

namespace h2o {

class BpeModel final : public TokenizerModel {
 public:
  // Requires ValidateVocab(vocab).ok() and vocab.type == kByteLevelBpe.
  explicit BpeModel(const Vocab& vocab);

  // Per word: with ignore_merges (pre_tokenizer_specs.h) a word that is a
  // token is that token. Otherwise each byte starts as its own symbol and
  // the adjacent pair with the lowest merge rank merges (ties: leftmost)
  // until no pair has a merge. Each symbol is then the token spelled like it;
  // a symbol no token spells (possible only when merges name pieces the
  // vocabulary lacks) becomes llama.cpp's fallback: the tokens spelled by
  // single bytes of its spelling. `after_special` is unused.
  void EncodeFragment(std::string_view text, bool after_special,
                      std::vector<int32_t>* ids) const override;

 private:
  struct Merge {
    uint64_t pair = kNoPair;  // left symbol << 32 | right symbol
    int32_t rank = 0;
    int32_t result = 0;  // the merged symbol
  };
  static constexpr uint64_t kNoPair = ~uint64_t{0};
  struct Scratch;

  // Symbols are byte strings: ids below n_vocab_ are the tokens, higher ones
  // the pieces merges name that no token spells (extra_bytes_).
  int32_t SymbolOf(std::string_view bytes);
  void AddMerge(int32_t left, int32_t right, int32_t rank, int32_t result);
  const Merge* FindMerge(int32_t left, int32_t right) const;
  void EncodeWord(std::string_view word, Scratch& scratch, std::vector<int32_t>* ids) const;
  void AppendSymbol(int32_t symbol, std::vector<int32_t>* ids) const;

  PreTokenizer pre_tokenizer_;
  bool ignore_merges_;
  int32_t n_vocab_;
  PieceTable token_of_bytes_;  // the bytes a token spells -> id (llama.cpp: last id wins)
  PieceTable extra_symbols_;   // bytes -> symbol >= n_vocab_
  std::vector<std::string> extra_bytes_;
  std::array<int32_t, 256> byte_symbol_;
  std::array<int32_t, 256> single_byte_token_;  // the token spelled by that one byte, or -1
  std::vector<Merge> merges_;  // open addressing on `pair`, a power of two, at most half full
};

}  // namespace h2o
