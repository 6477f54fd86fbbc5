#include "tokenizer/gguf_vocab.h"

#include <string>
#include <vector>

namespace h2o {

Result<Vocab> LoadVocabFromGguf(const gguf::File& file) {
  H2O_ASSIGN_OR_RETURN(const std::string model, file.GetString("tokenizer.ggml.model"));
  if (model != "llama") {
    return Status::Error("tokenizer model '" + model +
                         "' is not supported (only SentencePiece 'llama')")
        .WithContext(file.path());
  }

  Vocab vocab;
  H2O_ASSIGN_OR_RETURN(vocab.tokens, file.GetStringArray("tokenizer.ggml.tokens"));
  const size_t n = vocab.tokens.size();

  if (file.Find("tokenizer.ggml.scores") != nullptr) {
    H2O_ASSIGN_OR_RETURN(vocab.scores, file.GetF32Array("tokenizer.ggml.scores"));
  } else {
    vocab.scores.assign(n, 0.0f);
  }
  if (file.Find("tokenizer.ggml.token_type") != nullptr) {
    H2O_ASSIGN_OR_RETURN(const std::vector<int32_t> types,
                         file.GetI32Array("tokenizer.ggml.token_type"));
    vocab.types.reserve(types.size());
    for (int32_t t : types) vocab.types.push_back(static_cast<TokenType>(t));
  } else {
    vocab.types.assign(n, TokenType::kNormal);
  }

  // Ids are stored as uint32; a value above INT32_MAX turns negative here
  // and is then rejected by ValidateVocab as out of range.
  H2O_ASSIGN_OR_RETURN(const uint32_t bos, file.GetU32Or("tokenizer.ggml.bos_token_id", 1));
  H2O_ASSIGN_OR_RETURN(const uint32_t eos, file.GetU32Or("tokenizer.ggml.eos_token_id", 2));
  H2O_ASSIGN_OR_RETURN(const uint32_t unk, file.GetU32Or("tokenizer.ggml.unknown_token_id", 0));
  vocab.bos_id = static_cast<int32_t>(bos);
  vocab.eos_id = static_cast<int32_t>(eos);
  vocab.unk_id = static_cast<int32_t>(unk);
  H2O_ASSIGN_OR_RETURN(vocab.add_bos, file.GetBoolOr("tokenizer.ggml.add_bos_token", true));
  H2O_ASSIGN_OR_RETURN(vocab.add_space_prefix,
                       file.GetBoolOr("tokenizer.ggml.add_space_prefix", true));

  const Status valid = ValidateVocab(vocab);
  if (!valid.ok()) return valid.WithContext(file.path());
  return vocab;
}

}  // namespace h2o
