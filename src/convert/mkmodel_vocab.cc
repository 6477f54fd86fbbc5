#include "convert/mkmodel_vocab.h"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/vocab.h"

namespace h2o {

void SetSyntheticVocab(gguf::Writer& w, int64_t n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {static_cast<int32_t>(TokenType::kUnknown),
                                static_cast<int32_t>(TokenType::kControl),
                                static_cast<int32_t>(TokenType::kControl)};
  tokens.reserve(n_vocab);
  types.reserve(n_vocab);
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(static_cast<int32_t>(TokenType::kByte));
  }
  std::vector<float> scores(kMkModelFixedTokens, 0.0f);
  scores.reserve(n_vocab);
  for (int64_t id = kMkModelFixedTokens; id < n_vocab; ++id) {
    tokens.push_back(fmt::format("{}t{}", kSpaceMarker, id));
    types.push_back(static_cast<int32_t>(TokenType::kNormal));
    scores.push_back(-static_cast<float>(id - kMkModelFixedTokens));  // earlier pieces merge first
  }
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", std::move(tokens));
  w.SetF32Array("tokenizer.ggml.scores", scores);
  w.SetI32Array("tokenizer.ggml.token_type", types);
  w.SetU32("tokenizer.ggml.bos_token_id", 1);
  w.SetU32("tokenizer.ggml.eos_token_id", 2);
  w.SetU32("tokenizer.ggml.unknown_token_id", 0);
}

Result<int64_t> CopyVocab(gguf::Writer& w, const std::string& path) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<gguf::File> file, gguf::File::Open(path));
  if (file->Find("tokenizer.ggml.tokens") == nullptr) {
    return Status::Error(path + ": --vocab-from file has no tokenizer (tokenizer.ggml.tokens)");
  }
  H2O_ASSIGN_OR_RETURN(const std::vector<std::string> tokens,
                       file->GetStringArray("tokenizer.ggml.tokens"));
  for (const gguf::KeyValue& kv : file->metadata()) {
    if (kv.key.starts_with("tokenizer.")) w.Set(kv.key, kv.value);
  }
  return static_cast<int64_t>(tokens.size());
}

}  // namespace h2o
