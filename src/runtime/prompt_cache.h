// The prompt cache: states of finished requests (at the end of each prompt
// and where each request stopped), kept for later requests whose tokens
// begin with a kept state's tokens, a conversation's next turn or a
// regenerate, which then resume from it and feed only the rest. Least
// recently used first out, under a byte limit the caller gives each time
// (the scheduler's KV memory left over). A state is kept compact
// (SequenceState), so an evicting policy's state costs what it kept.
//
// Exactness: a request resumed from a state gives what one sequence fed
// the same tokens in the same pieces gives; a state is only ever used
// whole (its tokens a prefix of the request's), never cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "runtime/sequence.h"

namespace h2o {

class PromptCache {
 public:
  // Keeps `state` as the state after `tokens`, replacing an entry of the
  // same tokens that `same_kind` accepts, and drops the least recently used
  // entries until everything fits in `limit` bytes; a state larger than
  // `limit` is not kept. Returns whether it was kept.
  // A `shared` entry (a prefix many requests begin with, such as a system
  // prompt) is never dropped by DropPrefixesOf.
  bool Insert(std::vector<int32_t> tokens, SequenceState state, size_t limit,
              const std::function<bool(const SequenceState&)>& same_kind, bool shared = false);

  // What an entry of `tokens` and `state` costs against the limit.
  static size_t EntryBytes(std::span<const int32_t> tokens, const SequenceState& state) {
    return state.Bytes() + tokens.size() * sizeof(int32_t);
  }

  struct Hit {
    const SequenceState* state;
    size_t n_tokens;  // the prompt tokens it covers
  };
  // The entry with the most tokens that begin `tokens` and that `can_load`
  // accepts: fewer than all of them, or all when it kept the logits after
  // them (then nothing needs feeding). Marks it most recently used.
  std::optional<Hit> Find(std::span<const int32_t> tokens,
                          const std::function<bool(const SequenceState&)>& can_load);

  // Drops the entries of fewer tokens than `tokens` that begin it and that
  // `same_kind` accepts, shared ones apart: a conversation's earlier turns, which its newer
  // state supersedes (so a conversation costs one turn's states, not all
  // of them). Returns how many were dropped.
  size_t DropPrefixesOf(std::span<const int32_t> tokens,
                        const std::function<bool(const SequenceState&)>& same_kind);

  // Whether an entry of exactly `tokens` that `same_kind` accepts is kept.
  bool Holds(std::span<const int32_t> tokens,
             const std::function<bool(const SequenceState&)>& same_kind) const;
  // The most recently used entry of exactly `tokens`, or null.
  const SequenceState* FindExact(std::span<const int32_t> tokens) const;
  // Drops every entry whose tokens begin `tokens`, up to all of them (of
  // any kind). Returns how many.
  size_t EraseWithin(std::span<const int32_t> tokens);

  // Drops the least recently used entry; false when there is none.
  bool EvictOne();
  // Drops entries, oldest first, until at most `limit` bytes are kept.
  void ShrinkTo(size_t limit);

  // While on, what EvictOne drops (and a state Insert could not keep) is
  // held for TakeEvicted instead of freed: a disk tier writes it there.
  void set_keep_evicted(bool keep) { keep_evicted_ = keep; }
  struct Evicted {
    std::vector<int32_t> tokens;
    SequenceState state;
  };
  std::vector<Evicted> TakeEvicted() { return std::exchange(evicted_, {}); }

  // Calls fn(tokens, state) for every entry, most recently used first.
  void ForEach(const std::function<void(std::span<const int32_t>, const SequenceState&)>& fn) const {
    for (const Entry& e : entries_) fn(e.tokens, e.state);
  }

  size_t bytes() const { return bytes_; }
  size_t size() const { return entries_.size(); }
  int64_t evictions() const { return evictions_; }

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    SequenceState state;
    size_t bytes;
    bool shared = false;
  };
  std::list<Entry> entries_;  // most recently used first
  size_t bytes_ = 0;
  int64_t evictions_ = 0;
  bool keep_evicted_ = false;
  std::vector<Evicted> evicted_;
};

}  // namespace h2o
