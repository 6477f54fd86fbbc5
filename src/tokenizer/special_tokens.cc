#include "tokenizer/special_tokens.h"

#include <algorithm>
#include <utility>

namespace h2o {

SpecialTokenSplitter::SpecialTokenSplitter(const Vocab& vocab) : by_first_byte_(256) {
  std::vector<int32_t> specials;
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const TokenType t = vocab.types[id];
    const bool special =
        t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown;
    if (special && !vocab.tokens[id].empty()) specials.push_back(static_cast<int32_t>(id));
  }
  std::stable_sort(specials.begin(), specials.end(), [&](int32_t a, int32_t b) {
    return vocab.tokens[a].size() > vocab.tokens[b].size();
  });
  for (int32_t id : specials) {
    const std::string& text = vocab.tokens[id];
    by_first_byte_[static_cast<uint8_t>(text[0])].push_back(static_cast<uint32_t>(texts_.size()));
    texts_.push_back(text);
    ids_.push_back(id);
  }
}

void SpecialTokenSplitter::Split(std::string_view text, std::vector<TextFragment>* out) const {
  // Every occurrence of every special token, as (priority, offset).
  std::vector<std::pair<uint32_t, size_t>> found;
  if (!texts_.empty()) {
    for (size_t pos = 0; pos < text.size(); ++pos) {
      for (uint32_t priority : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
        if (text.substr(pos).starts_with(texts_[priority])) found.emplace_back(priority, pos);
      }
    }
  }
  if (found.empty()) {
    if (!text.empty()) out->push_back({text, -1});
    return;
  }
  std::sort(found.begin(), found.end());

  // Cut in priority order; an occurrence is cut when it overlaps neither an
  // earlier cut of the same token nor text a longer token took.
  std::vector<bool> taken(text.size(), false);
  std::vector<std::pair<size_t, uint32_t>> cuts;  // (offset, priority)
  size_t end_of_last = 0;
  for (size_t i = 0; i < found.size(); ++i) {
    const auto [priority, pos] = found[i];
    if (i == 0 || found[i - 1].first != priority) end_of_last = 0;
    const size_t len = texts_[priority].size();
    if (pos < end_of_last) continue;
    if (std::any_of(taken.begin() + pos, taken.begin() + pos + len, [](bool t) { return t; })) {
      continue;
    }
    std::fill(taken.begin() + pos, taken.begin() + pos + len, true);
    cuts.emplace_back(pos, priority);
    end_of_last = pos + len;
  }
  std::sort(cuts.begin(), cuts.end());
  size_t begin = 0;
  for (const auto& [pos, priority] : cuts) {
    if (pos > begin) out->push_back({text.substr(begin, pos - begin), -1});
    out->push_back({std::string_view(), ids_[priority]});
    begin = pos + texts_[priority].size();
  }
  if (begin < text.size()) out->push_back({text.substr(begin), -1});
}

}  // namespace h2o
