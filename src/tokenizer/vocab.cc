#include "tokenizer/vocab.h"

#include <string>

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
  for (size_t i = 0; i < n; ++i) {
    const auto t = static_cast<int32_t>(vocab.types[i]);
    if (t < static_cast<int32_t>(TokenType::kNormal) || t > static_cast<int32_t>(TokenType::kByte)) {
      return Status::Error("token " + std::to_string(i) + " has invalid token type " +
                           std::to_string(t));
    }
    if (vocab.types[i] == TokenType::kByte && ParseByteToken(vocab.tokens[i]) < 0) {
      return Status::Error("token " + std::to_string(i) + " '" + vocab.tokens[i] +
                           "' has type byte but is not spelled <0xXX>");
    }
  }
  H2O_RETURN_IF_ERROR(CheckId("bos token id", vocab.bos_id, n));
  H2O_RETURN_IF_ERROR(CheckId("eos token id", vocab.eos_id, n));
  H2O_RETURN_IF_ERROR(CheckId("unknown token id", vocab.unk_id, n));
  return Status::Ok();
}

int ParseByteToken(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  const int hi = HexDigit(piece[3]);
  const int lo = HexDigit(piece[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

}  // namespace h2o
