// Tokenizer: text <-> token ids for a Vocab, with either of the two models
// GGUF files name in tokenizer.ggml.model (vocab.h): SentencePiece-BPE
// ("llama") or byte-level BPE ("gpt2").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/special_tokens.h"
#include "tokenizer/tokenizer_model.h"
#include "tokenizer/vocab.h"

namespace h2o {

// Immutable after construction: Encode, Decode and TokenToPiece are
// thread-safe.
class Tokenizer {
 public:
  // Requires ValidateVocab(vocab).ok() (the loaders guarantee it; checked).
  explicit Tokenizer(Vocab vocab);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of text. Special tokens written in the text (control,
  // user-defined and unknown tokens, e.g. "<|eot_id|>") become their ids
  // (llama.cpp's parse_special); the model encodes the text between them
  // (spm_model.h, bpe_model.h). `add_special`: start with BOS when
  // vocab().add_bos and end with EOS when vocab().add_eos (from the GGUF's
  // tokenizer.ggml.add_bos_token / add_eos_token); false for a continuation.
  // Any byte string is accepted, valid UTF-8 or not.
  std::vector<int32_t> Encode(std::string_view text, bool add_special) const;

  // The inverse of Encode: Decode(Encode(t, s), s) == t for every byte
  // string t when the vocabulary can spell every byte (byte-level BPE
  // vocabularies do; SentencePiece needs all 256 <0xXX> tokens) and, with
  // SentencePiece, t has no "▁" and no spelled unknown token (it decodes as
  // " ⁇ "). `remove_special` drops a
  // leading BOS when vocab().add_bos and a trailing EOS when vocab().add_eos.
  // Special tokens are written as they are spelled; SentencePiece drops the
  // space its dummy prefix added at the start and after each control or
  // user-defined token. Ids outside [0, n_vocab()) produce nothing: validate
  // ids from users against n_vocab() before calling.
  std::string Decode(const std::vector<int32_t>& ids, bool remove_special) const;

  // The text of one token for streaming output: raw bytes (a byte token or
  // a byte-level piece may be a lone part of a UTF-8 character), "▁" as a
  // space, user-defined tokens as spelled. "" for control tokens,
  // out-of-range ids, byte-level BPE's unknown token and SentencePiece's
  // unused ones; SentencePiece's unknown token is " ⁇ ".
  std::string TokenToPiece(int32_t id) const;

  const Vocab& vocab() const { return *vocab_; }
  int32_t n_vocab() const { return static_cast<int32_t>(vocab_->tokens.size()); }
  int32_t bos_id() const { return vocab_->bos_id; }
  int32_t eos_id() const { return vocab_->eos_id; }
  // Whether generation stops at `id`: EOS, the file's end-of-turn and
  // end-of-message tokens, and the control tokens llama.cpp (b7847) treats
  // as ends by their spelling ("<|eot_id|>", "<|im_end|>", "<end_of_turn>",
  // "<|end_of_text|>", ...): a Llama 3 instruct file's EOS is <|eot_id|>,
  // but its base model ends a text with <|end_of_text|>.
  bool IsEndOfGeneration(int32_t id) const;

 private:
  std::unique_ptr<const Vocab> vocab_;
  std::unique_ptr<const TokenizerModel> model_;
  std::unique_ptr<const SpecialTokenSplitter> specials_;
  std::vector<std::string> decoded_;        // what Decode writes for each id
  std::vector<int32_t> end_of_generation_;  // sorted ids
};

}  // namespace h2o
