// Reads the tokenizer.bin that llama2.c's tokenizer export writes.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "tokenizer/vocab.h"

namespace h2o {

// File layout (little-endian): int32 max_token_length, then vocab_size
// records of {float32 score, int32 length, length bytes}. vocab_size comes
// from the model checkpoint; the file does not store it.
//
// Returns a Vocab equal to the one llama.cpp's GGUF conversion stores for
// the same SentencePiece model: spaces become "▁", BOS/EOS lose the newlines
// the export wraps them in ("\n<s>\n" -> "<s>"), and types are derived (id 0
// unknown, 1 and 2 control, "<0xXX>" byte, others normal). bos 1, eos 2,
// unk 0, add_bos and add_space_prefix true.
// Errors (with the path): unreadable file, truncation, negative or
// over-long lengths, bytes left after vocab_size tokens.
Result<Vocab> LoadLlama2cVocab(const std::string& path, int32_t vocab_size);

}  // namespace h2o
