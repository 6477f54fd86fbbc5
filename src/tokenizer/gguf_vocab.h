// Builds a Vocab from a GGUF file's tokenizer.ggml.* metadata.
#pragma once

#include "core/status.h"
#include "gguf/file.h"
#include "tokenizer/vocab.h"

namespace h2o {

// Reads tokenizer.ggml.model (required; must be "llama", i.e. SentencePiece:
// anything else is "tokenizer model 'gpt2' is not supported (only
// SentencePiece 'llama')"), tokenizer.ggml.tokens (required), .scores
// (absent: all 0), .token_type (absent: all normal), .bos_token_id (absent:
// 1), .eos_token_id (2), .unknown_token_id (0), .add_bos_token (true) and
// .add_space_prefix (true): the defaults llama.cpp uses for this model.
// Errors begin with the file's path: missing or mistyped keys, arrays whose
// lengths differ from tokens', invalid token types, ids out of range.
Result<Vocab> LoadVocabFromGguf(const gguf::File& file);

}  // namespace h2o
