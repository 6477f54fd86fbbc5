// Builds a Vocab (and a Tokenizer) from a GGUF file's tokenizer.ggml.*
// metadata. Needs no tensors: vocab-only GGUFs load too.
#pragma once

#include "core/status.h"
#include "gguf/file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace h2o {

// Reads tokenizer.ggml.model (required: "llama" for SentencePiece, "gpt2"
// for byte-level BPE), tokenizer.ggml.tokens (required), .scores (absent:
// all 0), .token_type (absent: all normal), .bos_token_id, .eos_token_id,
// .unknown_token_id, .add_bos_token, .add_eos_token and .add_space_prefix,
// and for gpt2 .pre (absent: "default") and .merges (required). Absent keys
// take llama.cpp's defaults: llama bos 1, eos 2, unk 0, add_bos true,
// add_space_prefix true; gpt2 bos 11, eos 11, no unk, add_bos as the
// pre-tokenizer says (true for Llama 3 and Tekken), add_space_prefix
// false; add_eos false for both.
// Errors begin with the file's path: other models, an unknown
// pre-tokenizer, missing or mistyped keys, arrays whose lengths differ from
// tokens', invalid token types or merges, ids out of range.
Result<Vocab> LoadVocabFromGguf(const gguf::File& file);

// LoadVocabFromGguf, then the Tokenizer for it.
Result<Tokenizer> LoadTokenizerFromGguf(const gguf::File& file);

}  // namespace h2o
