#include "tokenizer/vocab.h"

#include <string>

#include "tokenizer/pre_tokenizer_specs.h"

namespace h2o {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Status CheckId(const char* name, int32_t id, size_t n_vocab) {
  if (id < 0 || static_cast<size_t>(id) >= n_vocab) {
    return Status::Error(std::string(name) + " " + std::to_string(id) +
                         " is out of range for a vocabulary of " + std::to_string(n_vocab) +
                         " tokens");
  }
  return Status::Ok();
}

Status ValidateByteLevelBpe(const Vocab& vocab) {
  if (FindPreTokenizer(vocab.pre) == nullptr) {
    return Status::Error("unknown pre-tokenizer '" + vocab.pre + "' (tokenizer.ggml.pre)");
  }
  for (size_t i = 0; i < vocab.merges.size(); ++i) {
    std::string_view left, right;
    if (!SplitMerge(vocab.merges[i], &left, &right)) {
      return Status::Error("merge " + std::to_string(i) + " '" + vocab.merges[i] +
                           "' is not two pieces separated by a space");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateVocab(const Vocab& vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) return Status::Error("vocabulary is empty");
  if (vocab.scores.size() != n) {
    return Status::Error("vocabulary has " + std::to_string(n) + " tokens but " +
                         std::to_string(vocab.scores.size()) + " scores");
  }
  if (vocab.types.size() != n) {
    return Status::Error("vocabulary has " + std::to_string(n) + " tokens but " +
                         std::to_string(vocab.types.size()) + " token types");
  }
  const bool spm = vocab.type == VocabType::kSentencePiece;
  for (size_t i = 0; i < n; ++i) {
    const auto t = static_cast<int32_t>(vocab.types[i]);
    if (t < static_cast<int32_t>(TokenType::kNormal) ||
        t > static_cast<int32_t>(TokenType::kByte)) {
      return Status::Error("token " + std::to_string(i) + " has invalid token type " +
                           std::to_string(t));
    }
    if (spm && vocab.types[i] == TokenType::kByte && ParseByteToken(vocab.tokens[i]) < 0) {
      return Status::Error("token " + std::to_string(i) + " '" + vocab.tokens[i] +
                           "' has type byte but is not spelled <0xXX>");
    }
  }
  H2O_RETURN_IF_ERROR(CheckId("bos token id", vocab.bos_id, n));
  H2O_RETURN_IF_ERROR(CheckId("eos token id", vocab.eos_id, n));
  if (spm || vocab.unk_id != -1) H2O_RETURN_IF_ERROR(CheckId("unknown token id", vocab.unk_id, n));
  if (vocab.eot_id != -1) H2O_RETURN_IF_ERROR(CheckId("eot token id", vocab.eot_id, n));
  if (vocab.eom_id != -1) H2O_RETURN_IF_ERROR(CheckId("eom token id", vocab.eom_id, n));
  if (!spm) H2O_RETURN_IF_ERROR(ValidateByteLevelBpe(vocab));
  return Status::Ok();
}

int ParseByteToken(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  const int hi = HexDigit(piece[3]);
  const int lo = HexDigit(piece[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

bool SplitMerge(std::string_view merge, std::string_view* left, std::string_view* right) {
  const size_t space = merge.find(' ', 1);
  if (space == std::string_view::npos || space + 1 == merge.size()) return false;
  *left = merge.substr(0, space);
  *right = merge.substr(space + 1);
  return true;
}

}  // namespace h2o
