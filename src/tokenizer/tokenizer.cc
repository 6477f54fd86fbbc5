// Encode follows SentencePiece's BPE model (and llama.cpp's llm_tokenizer_spm):
// the text is a doubly linked list of symbols, initially one per UTF-8
// character. A max-heap holds candidate merges of adjacent symbols, ordered
// by the merged piece's score, then by the leftmost position. A merge always
// absorbs the right symbol into the left one, so a symbol's start never
// moves; a heap entry is stale when either side is gone or the pair's
// combined length no longer matches, and is skipped when popped. Each merge
// pushes at most two new candidates, so the heap stays O(n).
//
// Words are encoded one at a time when the vocabulary allows it, which keeps
// the heap small and in cache on long documents. It allows it when "▁"
// occurs in mergeable pieces only as a leading run (^▁*[^▁]*$, as
// SentencePiece trains with split_by_whitespace): then no merge can join a
// non-"▁" symbol to a following "▁" symbol, because the merged piece would
// hold a "▁" after a non-"▁" byte. Cutting the text before every such "▁"
// therefore yields segments that never interact, and merging each on its
// own performs the same merges, in the same relative order, as the whole.
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <utility>

namespace h2o {
namespace {

// Length of the UTF-8 sequence starting with lead byte c; stray continuation
// bytes and invalid leads count as one-byte characters (they fall back to
// byte tokens).
size_t Utf8Length(unsigned char c) {
  if (c < 0xC0) return 1;
  if (c < 0xE0) return 2;
  if (c < 0xF0) return 3;
  if (c < 0xF8) return 4;
  return 1;
}

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

bool HasOnlyLeadingSpaceMarkers(std::string_view piece) {
  size_t p = 0;
  while (piece.substr(p, kSpaceMarker.size()) == kSpaceMarker) p += kSpaceMarker.size();
  return piece.find(kSpaceMarker, p) == std::string_view::npos;
}

uint64_t HashPiece(std::string_view piece) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: pieces are a few bytes long
  for (char c : piece) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

struct Symbol {
  size_t offset;  // into the normalized text
  size_t len;     // 0 once merged into its left neighbour
  int64_t prev;   // -1 at the ends
  int64_t next;
};

struct Candidate {
  float score;
  int64_t left;
  int64_t right;
  size_t len;  // left.len + right.len when pushed
};

struct LowerPriority {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.score != b.score) return a.score < b.score;
    return a.left > b.left;
  }
};

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  H2O_CHECK(ValidateVocab(vocab_).ok());
  byte_to_id_.fill(-1);
  const int32_t n = n_vocab();
  size_t n_slots = 16;
  while (n_slots < 2 * static_cast<size_t>(n)) n_slots *= 2;
  piece_slots_.assign(n_slots, -1);
  piece_slot_hashes_.assign(n_slots, 0);
  piece_text_.resize(n);
  for (int32_t id = 0; id < n; ++id) {
    const std::string& piece = vocab_.tokens[id];
    switch (vocab_.types[id]) {
      case TokenType::kNormal:
      case TokenType::kUserDefined:
        if (FindPiece(piece) < 0) {  // the first id wins on duplicates
          const uint64_t hash = HashPiece(piece);
          size_t slot = hash & (n_slots - 1);
          while (piece_slots_[slot] >= 0) slot = (slot + 1) & (n_slots - 1);
          piece_slots_[slot] = id;
          piece_slot_hashes_[slot] = hash;
        }
        words_are_independent_ = words_are_independent_ && HasOnlyLeadingSpaceMarkers(piece);
        piece_text_[id] = ReplaceSpaceMarkers(piece);
        break;
      case TokenType::kByte: {
        const int byte = ParseByteToken(piece);
        if (byte_to_id_[byte] < 0) byte_to_id_[byte] = id;
        piece_text_[id] = std::string(1, static_cast<char>(byte));
        break;
      }
      case TokenType::kUnknown:
        piece_text_[id] = " \xE2\x81\x87 ";
        break;
      case TokenType::kControl:
      case TokenType::kUnused:
        break;
    }
  }
}

int32_t Tokenizer::FindPiece(std::string_view piece) const {
  const uint64_t hash = HashPiece(piece);
  const size_t mask = piece_slots_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    const int32_t id = piece_slots_[slot];
    if (id < 0) return -1;
    if (piece_slot_hashes_[slot] == hash && vocab_.tokens[id] == piece) return id;
  }
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_bos) const {
  std::vector<int32_t> ids;
  if (add_bos) ids.push_back(vocab_.bos_id);
  if (text.empty()) return ids;

  std::string norm;
  norm.reserve(text.size() + 8);
  if (vocab_.add_space_prefix) norm += kSpaceMarker;
  for (char c : text) {
    if (c == ' ') {
      norm += kSpaceMarker;
    } else {
      norm += c;
    }
  }
  const std::string_view norm_view = norm;

  std::vector<Symbol> symbols;
  symbols.reserve(norm.size());
  for (size_t offset = 0; offset < norm.size();) {
    const size_t len =
        std::min(Utf8Length(static_cast<unsigned char>(norm[offset])), norm.size() - offset);
    symbols.push_back({offset, len, -1, -1});
    offset += len;
  }
  auto is_marker = [&](const Symbol& s) {
    return norm_view.substr(s.offset, s.len) == kSpaceMarker;
  };

  std::vector<Candidate> heap;  // reused across segments
  auto try_push = [&](int64_t left, int64_t right) {
    if (left < 0 || right < 0) return;
    const size_t len = symbols[left].len + symbols[right].len;
    const int32_t id = FindPiece(norm_view.substr(symbols[left].offset, len));
    if (id < 0) return;
    heap.push_back({vocab_.scores[id], left, right, len});
    std::push_heap(heap.begin(), heap.end(), LowerPriority());
  };

  // Runs BPE on symbols [begin, end) and appends their ids.
  auto encode_segment = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      symbols[i].prev = i - 1;
      symbols[i].next = i + 1 < end ? i + 1 : -1;
    }
    symbols[begin].prev = -1;
    heap.clear();
    for (int64_t i = begin + 1; i < end; ++i) try_push(i - 1, i);

    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), LowerPriority());
      const Candidate c = heap.back();
      heap.pop_back();
      Symbol& left = symbols[c.left];
      Symbol& right = symbols[c.right];
      if (left.len == 0 || right.len == 0 || left.next != c.right ||
          left.len + right.len != c.len) {
        continue;  // stale: one side was merged elsewhere since this was pushed
      }
      left.len += right.len;
      right.len = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = c.left;
      try_push(left.prev, c.left);
      try_push(c.left, left.next);
    }

    for (int64_t i = begin; i >= 0; i = symbols[i].next) {
      const std::string_view piece = norm_view.substr(symbols[i].offset, symbols[i].len);
      const int32_t id = FindPiece(piece);
      if (id >= 0) {
        ids.push_back(id);
        continue;
      }
      for (char c : piece) {
        const int32_t byte_id = byte_to_id_[static_cast<unsigned char>(c)];
        ids.push_back(byte_id >= 0 ? byte_id : vocab_.unk_id);
      }
    }
  };

  const auto n = static_cast<int64_t>(symbols.size());
  if (!words_are_independent_) {
    encode_segment(0, n);
    return ids;
  }
  int64_t begin = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (is_marker(symbols[i]) && !is_marker(symbols[i - 1])) {
      encode_segment(begin, i);
      begin = i;
    }
  }
  encode_segment(begin, n);
  return ids;
}

std::string Tokenizer::TokenToPiece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return "";
  return piece_text_[id];
}

std::string Tokenizer::Decode(const std::vector<int32_t>& ids) const {
  std::string out;
  bool at_start = true;  // the next text-producing piece carries the dummy prefix
  for (const int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) continue;
    if (id == vocab_.bos_id) {
      at_start = true;
      continue;
    }
    const std::string& text = piece_text_[id];
    if (text.empty()) continue;
    if (at_start && vocab_.add_space_prefix && text[0] == ' ' &&
        vocab_.types[id] != TokenType::kByte && vocab_.types[id] != TokenType::kUnknown) {
      out.append(text, 1);
    } else {
      out += text;
    }
    at_start = false;
  }
  return out;
}

}  // namespace h2o
