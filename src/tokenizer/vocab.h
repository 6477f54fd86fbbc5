// Vocab: the data a tokenizer is built from, independent of the file it came
// from (GGUF metadata or a llama2.c tokenizer.bin).
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

// tokenizer.ggml.model: which algorithm turns text into tokens.
enum class VocabType {
  kSentencePiece,  // "llama": SentencePiece-BPE over scores
  kByteLevelBpe,   // "gpt2": pre-tokenizer regexes, then BPE over merge ranks
};

struct Vocab {
  VocabType type = VocabType::kSentencePiece;
  // tokens, scores and types are parallel arrays. SentencePiece pieces spell
  // a space "▁" and byte tokens "<0x0A>"; byte-level BPE pieces are spelled
  // in the characters of ByteToUnicode (byte_unicode.h). Control,
  // user-defined and unknown tokens are spelled as written in text.
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  // Byte-level BPE: tokenizer.ggml.pre (a name FindPreTokenizer knows) and
  // the merges "left right", highest priority first.
  std::string pre = "default";
  std::vector<std::string> merges;
  int32_t bos_id = 1, eos_id = 2;
  // End of turn and end of message (tokenizer.ggml.eot_token_id,
  // eom_token_id): chat models stop there too; -1 when the file names none.
  int32_t eot_id = -1, eom_id = -1;
  int32_t unk_id = 0;            // byte-level BPE: -1 when there is none
  bool add_bos = true;           // Encode(text, add_special) starts with bos_id
  bool add_eos = false;          // ... and ends with eos_id
  bool add_space_prefix = true;  // SentencePiece's dummy prefix
};

// The SentencePiece space marker U+2581 in UTF-8.
inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

// Returns ok when the arrays are non-empty and of equal length, every type is
// one of TokenType's values, every SentencePiece kByte token is spelled
// "<0xXX>", bos/eos/unk ids are in range (unk may be -1 for byte-level BPE,
// eot and eom -1 in any),
// and for byte-level BPE the pre-tokenizer is known and every merge is two
// non-empty pieces separated by a space. Messages name the offending field;
// callers add the file name.
Status ValidateVocab(const Vocab& vocab);

// If `piece` is a byte token spelled "<0xXX>" (two hex digits), returns its
// byte value 0..255; otherwise -1.
int ParseByteToken(std::string_view piece);

// Splits a merge "left right" at its first space after the first byte (as
// llama.cpp does); false when there is none or either side is empty.
bool SplitMerge(std::string_view merge, std::string_view* left, std::string_view* right);

}  // namespace h2o
