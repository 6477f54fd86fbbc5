#include "runtime/prompt_cache.h"

#include <algorithm>

namespace h2o {

bool PromptCache::Insert(std::vector<int32_t> tokens, SequenceState state, size_t limit,
                         const std::function<bool(const SequenceState&)>& same_kind,
                         bool shared) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->tokens == tokens && same_kind(it->state)) {
      bytes_ -= it->bytes;
      entries_.erase(it);
      break;
    }
  }
  const size_t bytes = EntryBytes(tokens, state);
  if (bytes > limit) {
    if (keep_evicted_) evicted_.push_back({std::move(tokens), std::move(state)});
    return false;
  }
  ShrinkTo(limit - bytes);
  entries_.push_front({std::move(tokens), std::move(state), bytes, shared});
  bytes_ += bytes;
  return true;
}

std::optional<PromptCache::Hit> PromptCache::Find(
    std::span<const int32_t> tokens, const std::function<bool(const SequenceState&)>& can_load) {
  auto best = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    const size_t n = it->tokens.size();
    if (n == 0 || n > tokens.size() || (best != entries_.end() && n <= best->tokens.size())) {
      continue;
    }
    if (n == tokens.size() && it->state.last_logits.empty()) continue;
    if (!std::equal(it->tokens.begin(), it->tokens.end(), tokens.begin())) continue;
    if (can_load(it->state)) best = it;
  }
  if (best == entries_.end()) return std::nullopt;
  entries_.splice(entries_.begin(), entries_, best);
  return Hit{&best->state, best->tokens.size()};
}

size_t PromptCache::DropPrefixesOf(std::span<const int32_t> tokens,
                                   const std::function<bool(const SequenceState&)>& same_kind) {
  return std::erase_if(entries_, [&](const Entry& e) {
    const bool drop = !e.shared && e.tokens.size() < tokens.size() &&
                      std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin()) &&
                      same_kind(e.state);
    if (drop) bytes_ -= e.bytes;
    return drop;
  });
}

bool PromptCache::Holds(std::span<const int32_t> tokens,
                        const std::function<bool(const SequenceState&)>& same_kind) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end()) &&
           same_kind(e.state);
  });
}

const SequenceState* PromptCache::FindExact(std::span<const int32_t> tokens) const {
  for (const Entry& e : entries_) {
    if (std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end())) return &e.state;
  }
  return nullptr;
}

size_t PromptCache::EraseWithin(std::span<const int32_t> tokens) {
  return std::erase_if(entries_, [&](const Entry& e) {
    const bool drop = e.tokens.size() <= tokens.size() &&
                      std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin());
    if (drop) bytes_ -= e.bytes;
    return drop;
  });
}

bool PromptCache::EvictOne() {
  if (entries_.empty()) return false;
  bytes_ -= entries_.back().bytes;
  if (keep_evicted_) {
    evicted_.push_back({std::move(entries_.back().tokens), std::move(entries_.back().state)});
  }
  entries_.pop_back();
  evictions_ += 1;
  return true;
}

void PromptCache::ShrinkTo(size_t limit) {
  while (bytes_ > limit && EvictOne()) {
  }
}

}  // namespace h2o
