// EncodeWord keeps a word's symbols in arrays indexed by their first byte,
// linked as a list, and candidate merges in a min-heap ordered by (rank,
// left index), llama.cpp's order. A merge folds the right symbol into the
// left one; an entry is stale once either side changed, which comparing the
// symbols it was made from detects (a position's symbol only ever grows, so
// it cannot come back to an older value).
#include "tokenizer/bpe_model.h"

#include <algorithm>

#include "core/status.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/pre_tokenizer_specs.h"

namespace h2o {
namespace {

const PreTokenizerSpec& SpecOf(const Vocab& vocab) {
  const PreTokenizerSpec* spec = FindPreTokenizer(vocab.pre);
  H2O_CHECK(spec != nullptr);  // ValidateVocab checked the name
  return *spec;
}

uint64_t PairKey(int32_t left, int32_t right) {
  return static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32 | static_cast<uint32_t>(right);
}

size_t PairSlot(uint64_t pair, size_t mask) {
  return static_cast<size_t>((pair * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

struct Candidate {
  int32_t rank;
  int32_t left, right;          // symbol positions in the word
  int32_t left_sym, right_sym;  // what they held when pushed
  int32_t result;
};

struct Later {  // std::*_heap keep the greatest first: make that the lowest (rank, left)
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

}  // namespace

struct BpeModel::Scratch {
  std::vector<std::string_view> words;
  std::vector<int32_t> symbol, prev, next;
  std::vector<Candidate> heap;
};

BpeModel::BpeModel(const Vocab& vocab)
    : pre_tokenizer_(SpecOf(vocab).patterns),
      ignore_merges_(SpecOf(vocab).ignore_merges),
      n_vocab_(static_cast<int32_t>(vocab.tokens.size())),
      token_of_bytes_(vocab.tokens.size()) {
  single_byte_token_.fill(-1);
  std::string bytes;
  for (int32_t id = 0; id < n_vocab_; ++id) {
    const std::string& spelling = vocab.tokens[id];
    bytes.clear();
    // A spelling outside the byte map (a control token with a space, say)
    // is never the spelling of a word or merge, so no lookup can find it.
    if (UnicodeToBytes(spelling, &bytes)) token_of_bytes_.Insert(bytes, id, /*replace=*/true);
    if (spelling.size() == 1) single_byte_token_[static_cast<uint8_t>(spelling[0])] = id;
  }
  for (int b = 0; b < 256; ++b) byte_symbol_[b] = SymbolOf(std::string(1, static_cast<char>(b)));

  size_t n_slots = 16;
  while (n_slots < 2 * vocab.merges.size()) n_slots *= 2;
  merges_.assign(n_slots, Merge{});
  std::string left_bytes, right_bytes;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    std::string_view left, right;
    H2O_CHECK(SplitMerge(vocab.merges[rank], &left, &right));  // ValidateVocab checked
    left_bytes.clear();
    right_bytes.clear();
    // Words are spelled in the byte map, so a merge of other characters
    // can never apply.
    if (!UnicodeToBytes(left, &left_bytes) || !UnicodeToBytes(right, &right_bytes)) continue;
    const int32_t l = SymbolOf(left_bytes);
    const int32_t r = SymbolOf(right_bytes);
    AddMerge(l, r, static_cast<int32_t>(rank), SymbolOf(left_bytes + right_bytes));
  }
}

int32_t BpeModel::SymbolOf(std::string_view bytes) {
  const int32_t token = token_of_bytes_.Find(bytes);
  if (token >= 0) return token;
  int32_t symbol = extra_symbols_.Find(bytes);
  if (symbol < 0) {
    symbol = n_vocab_ + static_cast<int32_t>(extra_bytes_.size());
    extra_symbols_.Insert(bytes, symbol, /*replace=*/false);
    extra_bytes_.emplace_back(bytes);
  }
  return symbol;
}

void BpeModel::AddMerge(int32_t left, int32_t right, int32_t rank, int32_t result) {
  const uint64_t pair = PairKey(left, right);
  const size_t mask = merges_.size() - 1;
  for (size_t i = PairSlot(pair, mask);; i = (i + 1) & mask) {
    if (merges_[i].pair == pair) return;  // a repeated merge keeps its first rank
    if (merges_[i].pair == kNoPair) {
      merges_[i] = {pair, rank, result};
      return;
    }
  }
}

const BpeModel::Merge* BpeModel::FindMerge(int32_t left, int32_t right) const {
  const uint64_t pair = PairKey(left, right);
  const size_t mask = merges_.size() - 1;
  for (size_t i = PairSlot(pair, mask);; i = (i + 1) & mask) {
    if (merges_[i].pair == pair) return &merges_[i];
    if (merges_[i].pair == kNoPair) return nullptr;
  }
}

void BpeModel::AppendSymbol(int32_t symbol, std::vector<int32_t>* ids) const {
  if (symbol < n_vocab_) {
    ids->push_back(symbol);
    return;
  }
  for (char byte : extra_bytes_[symbol - n_vocab_]) {
    for (char c : ByteToUnicode(static_cast<uint8_t>(byte))) {
      const int32_t id = single_byte_token_[static_cast<uint8_t>(c)];
      if (id >= 0) ids->push_back(id);
    }
  }
}

void BpeModel::EncodeWord(std::string_view word, Scratch& s, std::vector<int32_t>* ids) const {
  if (ignore_merges_ || word.size() == 1) {
    const int32_t token = token_of_bytes_.Find(word);
    if (token >= 0) {
      ids->push_back(token);
      return;
    }
  }
  const auto n = static_cast<int32_t>(word.size());
  s.symbol.resize(n);
  s.prev.resize(n);
  s.next.resize(n);
  for (int32_t i = 0; i < n; ++i) {
    s.symbol[i] = byte_symbol_[static_cast<uint8_t>(word[i])];
    s.prev[i] = i - 1;
    s.next[i] = i + 1 < n ? i + 1 : -1;
  }
  s.heap.clear();
  auto push = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Merge* merge = FindMerge(s.symbol[left], s.symbol[right]);
    if (merge == nullptr) return;
    s.heap.push_back({merge->rank, left, right, s.symbol[left], s.symbol[right], merge->result});
    std::push_heap(s.heap.begin(), s.heap.end(), Later());
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i, i + 1);
  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), Later());
    const Candidate c = s.heap.back();
    s.heap.pop_back();
    if (s.symbol[c.left] != c.left_sym || s.next[c.left] != c.right ||
        s.symbol[c.right] != c.right_sym) {
      continue;
    }
    s.symbol[c.left] = c.result;
    s.symbol[c.right] = -1;
    const int32_t after = s.next[c.right];
    s.next[c.left] = after;
    if (after >= 0) s.prev[after] = c.left;
    push(s.prev[c.left], c.left);
    push(c.left, after);
  }
  for (int32_t i = 0; i >= 0; i = s.next[i]) AppendSymbol(s.symbol[i], ids);
}

void BpeModel::EncodeFragment(std::string_view text, bool /*after_special*/,
                              std::vector<int32_t>* ids) const {
  Scratch scratch;
  pre_tokenizer_.Split(text, &scratch.words);
  for (std::string_view word : scratch.words) EncodeWord(word, scratch, ids);
}

}  // namespace h2o
