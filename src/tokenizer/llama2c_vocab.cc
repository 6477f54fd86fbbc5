#include "tokenizer/llama2c_vocab.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace h2o {
namespace {

// Bounds-checked little-endian reader over the whole file.
class Reader {
 public:
  explicit Reader(const std::string& data) : data_(data) {}
  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

  template <typename T>
  bool Read(T* out) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool ReadBytes(size_t n, std::string* out) {
    if (remaining() < n) return false;
    out->assign(data_, pos_, n);
    pos_ += n;
    return true;
  }

 private:
  const std::string& data_;
  size_t pos_ = 0;
};

std::string ToSentencePiece(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + 8);
  for (char c : raw) {
    if (c == ' ') {
      out += kSpaceMarker;
    } else {
      out += c;
    }
  }
  return out;
}

// The export writes BOS/EOS as "\n<s>\n" and "\n</s>\n".
std::string StripWrappingNewlines(std::string s) {
  if (s.size() >= 2 && s.front() == '\n' && s.back() == '\n') return s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

Result<Vocab> LoadLlama2cVocab(const std::string& path, int32_t vocab_size) {
  auto fail = [&](const std::string& message) { return Status::Error(path + ": " + message); };
  if (vocab_size <= 0) return fail("vocab_size must be positive, got " + std::to_string(vocab_size));

  std::ifstream file(path, std::ios::binary);
  if (!file) return fail("cannot open tokenizer file");
  const std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return fail("read error");

  Reader reader(data);
  int32_t max_token_length = 0;
  if (!reader.Read(&max_token_length)) return fail("file too short for the header (4 bytes)");
  if (max_token_length <= 0) {
    return fail("invalid max_token_length " + std::to_string(max_token_length));
  }

  Vocab vocab;
  vocab.tokens.reserve(vocab_size);
  vocab.scores.reserve(vocab_size);
  vocab.types.reserve(vocab_size);
  for (int32_t id = 0; id < vocab_size; ++id) {
    const std::string where = "token " + std::to_string(id) + " at offset " +
                              std::to_string(reader.offset());
    float score = 0;
    int32_t length = 0;
    if (!reader.Read(&score) || !reader.Read(&length)) {
      return fail("truncated at " + where + " (expected " + std::to_string(vocab_size) +
                  " tokens)");
    }
    if (length < 0 || length > max_token_length) {
      return fail(where + " has length " + std::to_string(length) + " outside [0, " +
                  std::to_string(max_token_length) + "]");
    }
    std::string raw;
    if (!reader.ReadBytes(static_cast<size_t>(length), &raw)) {
      return fail("truncated in the text of " + where);
    }

    TokenType type = TokenType::kNormal;
    if (id == 0) {
      type = TokenType::kUnknown;
    } else if (id == 1 || id == 2) {
      type = TokenType::kControl;
      raw = StripWrappingNewlines(std::move(raw));
    } else if (ParseByteToken(raw) >= 0) {
      type = TokenType::kByte;
    }
    vocab.tokens.push_back(type == TokenType::kNormal ? ToSentencePiece(raw) : raw);
    vocab.scores.push_back(score);
    vocab.types.push_back(type);
  }
  if (reader.remaining() != 0) {
    return fail(std::to_string(reader.remaining()) + " bytes left after " +
                std::to_string(vocab_size) + " tokens (wrong vocab_size?)");
  }
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  vocab.unk_id = 0;
  const Status valid = ValidateVocab(vocab);
  if (!valid.ok()) return valid.WithContext(path);
  return vocab;
}

}  // namespace h2o
