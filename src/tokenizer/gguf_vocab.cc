#include "tokenizer/gguf_vocab.h"

#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer_specs.h"

namespace h2o {
namespace {

// Model-specific keys and defaults; sets the fields the common code reads
// through GetU32Or/GetBoolOr to their defaults.
Status ReadModel(const gguf::File& file, Vocab* vocab) {
  H2O_ASSIGN_OR_RETURN(const std::string model, file.GetString("tokenizer.ggml.model"));
  if (model == "llama") {
    vocab->type = VocabType::kSentencePiece;
    vocab->bos_id = 1;
    vocab->eos_id = 2;
    vocab->unk_id = 0;
    vocab->add_bos = true;
    vocab->add_space_prefix = true;
    return Status::Ok();
  }
  if (model != "gpt2") {
    return Status::Error("tokenizer model '" + model +
                         "' is not supported (only 'llama' SentencePiece and 'gpt2' byte-level "
                         "BPE)");
  }
  vocab->type = VocabType::kByteLevelBpe;
  if (file.Find("tokenizer.ggml.pre") != nullptr) {
    H2O_ASSIGN_OR_RETURN(vocab->pre, file.GetString("tokenizer.ggml.pre"));
  }
  const PreTokenizerSpec* spec = FindPreTokenizer(vocab->pre);
  if (spec == nullptr) {
    return Status::Error("unknown pre-tokenizer '" + vocab->pre + "' (tokenizer.ggml.pre)");
  }
  H2O_ASSIGN_OR_RETURN(vocab->merges, file.GetStringArray("tokenizer.ggml.merges"));
  vocab->bos_id = 11;
  vocab->eos_id = 11;
  vocab->unk_id = -1;
  vocab->add_bos = spec->add_bos;
  vocab->add_space_prefix = false;
  return Status::Ok();
}

Result<int32_t> ReadId(const gguf::File& file, std::string_view key, int32_t fallback) {
  if (file.Find(key) == nullptr) return fallback;
  // Ids are stored as uint32; a value above INT32_MAX turns negative here
  // and is then rejected by ValidateVocab as out of range.
  H2O_ASSIGN_OR_RETURN(const uint32_t id, file.GetU32(key));
  return static_cast<int32_t>(id);
}

Result<Vocab> ReadVocab(const gguf::File& file) {
  Vocab vocab;
  H2O_RETURN_IF_ERROR(ReadModel(file, &vocab));
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

  H2O_ASSIGN_OR_RETURN(vocab.bos_id, ReadId(file, "tokenizer.ggml.bos_token_id", vocab.bos_id));
  H2O_ASSIGN_OR_RETURN(vocab.eos_id, ReadId(file, "tokenizer.ggml.eos_token_id", vocab.eos_id));
  H2O_ASSIGN_OR_RETURN(vocab.unk_id, ReadId(file, "tokenizer.ggml.unknown_token_id", vocab.unk_id));
  H2O_ASSIGN_OR_RETURN(vocab.eot_id, ReadId(file, "tokenizer.ggml.eot_token_id", -1));
  H2O_ASSIGN_OR_RETURN(vocab.eom_id, ReadId(file, "tokenizer.ggml.eom_token_id", -1));
  H2O_ASSIGN_OR_RETURN(vocab.add_bos,
                       file.GetBoolOr("tokenizer.ggml.add_bos_token", vocab.add_bos));
  H2O_ASSIGN_OR_RETURN(vocab.add_eos, file.GetBoolOr("tokenizer.ggml.add_eos_token", false));
  H2O_ASSIGN_OR_RETURN(vocab.add_space_prefix,
                       file.GetBoolOr("tokenizer.ggml.add_space_prefix", vocab.add_space_prefix));
  H2O_RETURN_IF_ERROR(ValidateVocab(vocab));
  return vocab;
}

}  // namespace

Result<Vocab> LoadVocabFromGguf(const gguf::File& file) {
  Result<Vocab> vocab = ReadVocab(file);
  if (!vocab.ok()) return vocab.status().WithContext(file.path());
  return vocab;
}

Result<Tokenizer> LoadTokenizerFromGguf(const gguf::File& file) {
  H2O_ASSIGN_OR_RETURN(Vocab vocab, LoadVocabFromGguf(file));
  return Tokenizer(std::move(vocab));
}

}  // namespace h2o
