// Vocab: the data a SentencePiece-BPE tokenizer is built from, independent of
// the file it came from (GGUF metadata or a llama2.c tokenizer.bin).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace h2o {

// Values of GGUF's tokenizer.ggml.token_type (SentencePiece piece types).
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Vocab {
  // SentencePiece pieces: U+2581 "▁" stands for a space, byte tokens are
  // spelled "<0x0A>". tokens, scores and types are parallel arrays.
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  int32_t bos_id = 1, eos_id = 2, unk_id = 0;
  bool add_bos = true;
  bool add_space_prefix = true;  // SentencePiece's dummy prefix
};

// The SentencePiece space marker U+2581 in UTF-8.
inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

// Returns ok when the arrays are non-empty and of equal length, every type is
// one of TokenType's values, every kByte token is spelled "<0xXX>" and
// bos/eos/unk ids are in range. Messages name
// the offending field; callers add the file name.
Status ValidateVocab(const Vocab& vocab);

// If `piece` is a byte token spelled "<0xXX>" (two hex digits), returns its
// byte value 0..255; otherwise -1.
int ParseByteToken(std::string_view piece);

}  // namespace h2o
