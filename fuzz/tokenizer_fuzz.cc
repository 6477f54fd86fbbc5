// One real vocabulary (H2O_FUZZ_VOCAB, set per target in CMakeLists.txt):
// text -> ids -> text must give the text back where tokenizer.h promises
// it, and arbitrary ids must decode without reading out of bounds.
//
// Input: byte 0 chooses the mode, the rest is the text or the ids.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/file.h"
#include "tokenizer/gguf_vocab.h"

namespace {

const h2o::Tokenizer* g_tokenizer = nullptr;
bool g_spells_every_byte = false;

void Fail(const char* what) {
  fprintf(stderr, "%s\n", what);
  std::abort();
}

std::string Hex(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    char b[4];
    snprintf(b, sizeof b, "%02x ", c);
    out += b;
  }
  return out;
}

bool SpellsEveryByte(const h2o::Tokenizer& t) {
  if (t.vocab().type != h2o::VocabType::kSentencePiece) return true;  // byte-level BPE
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    snprintf(piece, sizeof piece, "<0x%02X>", b);
    bool found = false;
    for (const std::string& token : t.vocab().tokens) found = found || token == piece;
    if (!found) return false;
  }
  return true;
}

// tokenizer.h's round-trip promise excludes, for SentencePiece, text with
// "▁" or with the unknown token spelled out.
bool RoundTrips(std::string_view text) {
  if (!g_spells_every_byte) return false;
  const h2o::Vocab& v = g_tokenizer->vocab();
  if (v.type != h2o::VocabType::kSentencePiece) return true;
  if (text.find("\xE2\x96\x81") != std::string_view::npos) return false;
  return v.unk_id < 0 || text.find(v.tokens[v.unk_id]) == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto file = h2o::gguf::File::Open(H2O_FUZZ_VOCAB);
  if (!file.ok()) Fail(file.status().message().c_str());
  auto tokenizer = h2o::LoadTokenizerFromGguf(*file.value());
  if (!tokenizer.ok()) Fail(tokenizer.status().message().c_str());
  g_tokenizer = new h2o::Tokenizer(std::move(tokenizer.value()));
  g_spells_every_byte = SpellsEveryByte(*g_tokenizer);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const bool special = (mode & 1) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const h2o::Tokenizer& t = *g_tokenizer;
  const int32_t n_vocab = t.n_vocab();

  if ((mode & 2) == 0) {
    const std::vector<int32_t> ids = t.Encode(rest, special);
    for (int32_t id : ids) {
      if (id < 0 || id >= n_vocab) Fail("Encode returned an id outside the vocabulary");
    }
    const std::string back = t.Decode(ids, special);
    if (RoundTrips(rest) && back != rest) {
      fprintf(stderr, "text: %s\nback: %s\n", Hex(rest).c_str(), Hex(back).c_str());
      Fail("Decode(Encode(text)) != text");
    }
    return 0;
  }

  // Ids from 3 bytes each, mapped to [-2, n_vocab + 2): mostly valid, with
  // the edges Decode must skip.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 3 <= rest.size(); i += 3) {
    const uint32_t raw = static_cast<uint8_t>(rest[i]) | static_cast<uint8_t>(rest[i + 1]) << 8 |
                         static_cast<uint32_t>(static_cast<uint8_t>(rest[i + 2])) << 16;
    ids.push_back(static_cast<int32_t>(raw % static_cast<uint32_t>(n_vocab + 4)) - 2);
  }
  (void)t.Decode(ids, special);
  for (int32_t id : ids) {
    (void)t.TokenToPiece(id);
    (void)t.IsEndOfGeneration(id);
  }
  return 0;
}
