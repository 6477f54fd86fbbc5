// The pre-tokenizers byte-level BPE vocabularies name in tokenizer.ggml.pre,
// as llama.cpp (b7847, src/llama-vocab.cpp) defines them.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace h2o {

struct PreTokenizerSpec {
  std::span<const std::string_view> names;     // the tokenizer.ggml.pre values
  std::span<const std::string_view> patterns;  // applied in turn (PreTokenizer)
  // A word that is itself a token is that token, whatever the merges say
  // (Llama 3 and Tekken: their vocabularies hold tokens no merge builds).
  bool ignore_merges = false;
  bool add_bos = false;  // when the GGUF has no tokenizer.ggml.add_bos_token
};

// The spec named `name` ("" and "default" are the default one), or nullptr.
const PreTokenizerSpec* FindPreTokenizer(std::string_view name);

// Every spec, in a fixed order.
std::span<const PreTokenizerSpec> PreTokenizerSpecs();

}  // namespace h2o
