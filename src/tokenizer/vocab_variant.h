// Vocab-only GGUFs that reuse one file's vocabulary with another
// pre-tokenizer or BOS/EOS setting. The tests and scripts/peer_tokenizers.sh
// build them to compare pre-tokenizers with llama.cpp on a real vocabulary.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "gguf/file.h"

namespace h2o {

struct VocabVariant {
  std::string pre;  // tokenizer.ggml.pre
  // tokenizer.ggml.add_bos_token / add_eos_token; nullopt removes the key, so
  // the loader's default applies (gguf_vocab.h).
  std::optional<bool> add_bos;
  std::optional<bool> add_eos;
};

// Writes `path` (atomically, see gguf::Writer::Write): every metadata key of
// `source` in its order, with the keys above set or removed, and no tensors.
Status WriteVocabVariant(const gguf::File& source, const VocabVariant& variant,
                         const std::string& path);

}  // namespace h2o
