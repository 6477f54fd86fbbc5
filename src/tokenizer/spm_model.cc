// EncodeFragment follows SentencePiece's BPE model (and llama.cpp's
// llm_tokenizer_spm): the text is a doubly linked list of symbols, initially
// one per UTF-8 character. A max-heap holds candidate merges of adjacent
// symbols, ordered by the merged piece's score, then by the leftmost
// position. A merge always absorbs the right symbol into the left one, so a
// symbol's start never moves; a heap entry is stale when either side is gone
// or the pair's combined length no longer matches, and is skipped when
// popped. Each merge pushes at most two new candidates, so the heap stays
// O(n).
//
// Words are encoded one at a time when the vocabulary allows it, which keeps
// the heap small and in cache on long documents. It allows it when "▁"
// occurs in mergeable pieces only as a leading run (^▁*[^▁]*$, as
// SentencePiece trains with split_by_whitespace): then no merge can join a
// non-"▁" symbol to a following "▁" symbol, because the merged piece would
// hold a "▁" after a non-"▁" byte. Cutting the text before every such "▁"
// therefore yields segments that never interact, and merging each on its
// own performs the same merges, in the same relative order, as the whole.
#include "tokenizer/spm_model.h"

#include <algorithm>
#include <string>

namespace h2o {
namespace {

// Length of the character starting at text[offset]: its lead byte's
// sequence length when that many continuation bytes follow, else 1. Stray
// continuation bytes, invalid leads and broken sequences are one-byte
// characters (they fall back to byte tokens): a lead that swallowed the
// bytes after it could hide a space marker from the merges, and Decode
// would then write "\u2581" where the text had a space (found by
// fuzz/tokenizer_fuzz.cc).
size_t CharLength(std::string_view text, size_t offset) {
  const unsigned char c = static_cast<unsigned char>(text[offset]);
  const size_t n = c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF8 ? 4 : 1;
  if (n > text.size() - offset) return 1;
  for (size_t i = 1; i < n; ++i) {
    if ((static_cast<unsigned char>(text[offset + i]) & 0xC0) != 0x80) return 1;
  }
  return n;
}

bool HasOnlyLeadingSpaceMarkers(std::string_view piece) {
  size_t p = 0;
  while (piece.substr(p, kSpaceMarker.size()) == kSpaceMarker) p += kSpaceMarker.size();
  return piece.find(kSpaceMarker, p) == std::string_view::npos;
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

SpmModel::SpmModel(const Vocab& vocab)
    : scores_(vocab.scores),
      unk_id_(vocab.unk_id),
      add_space_prefix_(vocab.add_space_prefix),
      mergeable_(vocab.tokens.size()) {
  byte_to_id_.fill(-1);
  const auto n = static_cast<int32_t>(vocab.tokens.size());
  for (int32_t id = 0; id < n; ++id) {
    const std::string& piece = vocab.tokens[id];
    switch (vocab.types[id]) {
      case TokenType::kNormal:
      case TokenType::kUserDefined:
        mergeable_.Insert(piece, id, /*replace=*/false);
        words_are_independent_ = words_are_independent_ && HasOnlyLeadingSpaceMarkers(piece);
        break;
      case TokenType::kByte: {
        const int byte = ParseByteToken(piece);
        if (byte_to_id_[byte] < 0) byte_to_id_[byte] = id;
        break;
      }
      default:
        break;
    }
  }
}

void SpmModel::EncodeFragment(std::string_view text, bool after_special,
                              std::vector<int32_t>* ids) const {
  std::string norm;
  norm.reserve(text.size() + 8);
  if (add_space_prefix_ && after_special) norm += kSpaceMarker;
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
    const size_t len = CharLength(norm_view, offset);
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
    const int32_t id = mergeable_.Find(norm_view.substr(symbols[left].offset, len));
    if (id < 0) return;
    heap.push_back({scores_[id], left, right, len});
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
      const int32_t id = mergeable_.Find(piece);
      if (id >= 0) {
        ids->push_back(id);
        continue;
      }
      for (char c : piece) {
        const int32_t byte_id = byte_to_id_[static_cast<unsigned char>(c)];
        ids->push_back(byte_id >= 0 ? byte_id : unk_id_);
      }
    }
  };

  const auto n = static_cast<int64_t>(symbols.size());
  if (n == 0) return;
  if (!words_are_independent_) {
    encode_segment(0, n);
    return;
  }
  int64_t begin = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (is_marker(symbols[i]) && !is_marker(symbols[i - 1])) {
      encode_segment(begin, i);
      begin = i;
    }
  }
  encode_segment(begin, n);
}

}  // namespace h2o
