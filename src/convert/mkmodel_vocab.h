// The vocabulary of a `h2o mkmodel` file: a synthetic SentencePiece one, or
// a real tokenizer copied from another GGUF.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "gguf/writer.h"

namespace h2o {

// Tokens every synthetic vocabulary starts with: <unk> <s> </s> and the 256
// byte tokens.
inline constexpr int64_t kMkModelFixedTokens = 3 + 256;

// A synthetic SentencePiece vocabulary laid out like LLaMA's: <unk> <s>
// </s>, the byte-fallback tokens <0x00>..<0xFF>, then pieces "▁t<id>".
// Requires n_vocab >= kMkModelFixedTokens.
void SetSyntheticVocab(gguf::Writer& w, int64_t n_vocab);

// Copies every tokenizer.* key of `path` (a model or a vocab-only GGUF) and
// returns its token count. Errors begin with the path.
Result<int64_t> CopyVocab(gguf::Writer& w, const std::string& path);

}  // namespace h2o
