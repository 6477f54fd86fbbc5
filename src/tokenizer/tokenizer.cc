#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

#include "tokenizer/bpe_model.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/spm_model.h"

namespace h2o {
namespace {

constexpr std::string_view kUnknownPiece = " \xE2\x81\x87 ";  // " ⁇ ", as SentencePiece shows it

bool IsSpecial(TokenType t) { return t == TokenType::kControl || t == TokenType::kUserDefined; }

std::string ReplaceSpaceMarkers(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kSpaceMarker.size()) == kSpaceMarker) {
      out += ' ';
      i += kSpaceMarker.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

std::string DecodedSentencePiece(const std::string& piece, TokenType type) {
  switch (type) {
    case TokenType::kNormal:
      return ReplaceSpaceMarkers(piece);
    case TokenType::kByte:
      return std::string(1, static_cast<char>(ParseByteToken(piece)));
    case TokenType::kUnknown:
      return std::string(kUnknownPiece);
    case TokenType::kUnused:
      return "";
    case TokenType::kControl:
    case TokenType::kUserDefined:
      break;
  }
  return piece;
}

std::string DecodedByteLevel(const std::string& piece, TokenType type) {
  std::string bytes;
  if (IsSpecial(type) || type == TokenType::kUnknown || !UnicodeToBytes(piece, &bytes)) {
    return piece;
  }
  return bytes;
}

// llama.cpp's list of end-of-generation spellings (llama-vocab.cpp,
// special_eog_ids) for files that name only their EOS.
std::vector<int32_t> EndOfGenerationIds(const Vocab& vocab) {
  static constexpr std::string_view kEndSpellings[] = {
      "<|eot_id|>", "<|im_end|>", "<|end|>",         "<|return|>",         "<|call|>",
      "<|flush|>",  "<|calls|>",  "<end_of_turn>",   "<|endoftext|>",      "<|eom_id|>",
      "<EOT>",      "_<EOT>",     "<|end_of_text|>", "<end_of_utterance>",
  };
  std::vector<int32_t> ids = {vocab.eos_id};
  for (const int32_t id : {vocab.eot_id, vocab.eom_id}) {
    if (id >= 0) ids.push_back(id);
  }
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.types[id] != TokenType::kControl && vocab.types[id] != TokenType::kUserDefined) {
      continue;
    }
    for (const std::string_view spelling : kEndSpellings) {
      if (vocab.tokens[id] == spelling) ids.push_back(static_cast<int32_t>(id));
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::make_unique<const Vocab>(std::move(vocab))) {
  H2O_CHECK(ValidateVocab(*vocab_).ok());
  const bool spm = vocab_->type == VocabType::kSentencePiece;
  if (spm) {
    model_ = std::make_unique<const SpmModel>(*vocab_);
  } else {
    model_ = std::make_unique<const BpeModel>(*vocab_);
  }
  specials_ = std::make_unique<const SpecialTokenSplitter>(*vocab_);
  end_of_generation_ = EndOfGenerationIds(*vocab_);
  decoded_.reserve(vocab_->tokens.size());
  for (size_t id = 0; id < vocab_->tokens.size(); ++id) {
    const std::string& piece = vocab_->tokens[id];
    const TokenType type = vocab_->types[id];
    decoded_.push_back(spm ? DecodedSentencePiece(piece, type) : DecodedByteLevel(piece, type));
  }
}

bool Tokenizer::IsEndOfGeneration(int32_t id) const {
  return std::binary_search(end_of_generation_.begin(), end_of_generation_.end(), id);
}

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special) const {
  std::vector<int32_t> ids;
  if (add_special && vocab_->add_bos) ids.push_back(vocab_->bos_id);
  std::vector<TextFragment> fragments;
  specials_->Split(text, &fragments);
  bool after_special = true;  // the start counts as following a special token
  for (const TextFragment& f : fragments) {
    if (f.special_id >= 0) {
      ids.push_back(f.special_id);
      after_special = true;
    } else {
      model_->EncodeFragment(f.text, after_special, &ids);
      after_special = false;
    }
  }
  if (add_special && vocab_->add_eos) ids.push_back(vocab_->eos_id);
  return ids;
}

std::string Tokenizer::Decode(const std::vector<int32_t>& all_ids, bool remove_special) const {
  std::span<const int32_t> ids = all_ids;
  if (remove_special && vocab_->add_bos && !ids.empty() && ids.front() == vocab_->bos_id) {
    ids = ids.subspan(1);
  }
  if (remove_special && vocab_->add_eos && !ids.empty() && ids.back() == vocab_->eos_id) {
    ids = ids.first(ids.size() - 1);
  }
  const bool strips_prefix = vocab_->type == VocabType::kSentencePiece && vocab_->add_space_prefix;
  std::string out;
  bool at_start = true;  // the next normal piece carries the dummy prefix
  for (const int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) continue;
    const std::string& text = decoded_[id];
    const TokenType type = vocab_->types[id];
    if (IsSpecial(type)) {
      out += text;
      at_start = true;
      continue;
    }
    if (text.empty()) continue;
    if (strips_prefix && at_start && text[0] == ' ' && type == TokenType::kNormal) {
      out.append(text, 1);
    } else {
      out += text;
    }
    at_start = false;
  }
  return out;
}

std::string Tokenizer::TokenToPiece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return "";
  const TokenType type = vocab_->types[id];
  if (type == TokenType::kControl) return "";
  if (type == TokenType::kUnknown && vocab_->type == VocabType::kByteLevelBpe) return "";
  return decoded_[id];
}

}  // namespace h2o
