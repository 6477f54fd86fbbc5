// The scheduler's prompt cache (runtime/prompt_cache.h) and its disk tier
// (runtime/state_dir.h): keeping each request's states, resuming a new
// request from the longest kept prefix, spilling what RAM drops, and the
// named saves.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "runtime/scheduler.h"
#include "runtime/scheduler_running.h"

namespace h2o {

size_t Scheduler::PromptCacheLimit() const {
  // What the running sequences have not reserved, at most the cache's own
  // limit (called under mu_ or on the driver thread that alone changes it).
  const size_t free =
      options_.kv_memory_bytes - std::min(options_.kv_memory_bytes, stats_.kv_reserved_bytes);
  return std::min(options_.prompt_cache_bytes, free);
}

bool Scheduler::KeepState(Running& r, size_t n_generated_fed) {
  if (options_.prompt_cache_bytes == 0 || !r.request.cache_prompt || r.sequence == nullptr) {
    return false;
  }
  std::vector<int32_t> tokens = r.request.prompt;
  const std::vector<int32_t>& ids = r.state.generation().ids;
  tokens.insert(tokens.end(), ids.begin(), ids.begin() + static_cast<ptrdiff_t>(n_generated_fed));
  SequenceState state;
  r.sequence->SaveState(state);
  const size_t bytes = PromptCache::EntryBytes(tokens, state);
  const Sequence& saver = *r.sequence;
  const auto same_kind = [&saver](const SequenceState& kept) { return saver.CanLoadState(kept); };
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // At a prompt's end its conversation's earlier turns are superseded (a
    // regenerate or an edit of the last message still finds this state).
    if (n_generated_fed == 0) prompt_cache_.DropPrefixesOf(r.request.prompt, same_kind);
    kept = prompt_cache_.Insert(std::move(tokens), std::move(state), PromptCacheLimit(), same_kind);
    if (kept) r.kept_bytes += bytes;
    UpdateCacheStats();
  }
  if (options_.state_dir != nullptr && n_generated_fed == 0) {
    options_.state_dir->DropPrefixesOf(r.request.prompt, saver.kv_plan_text());
  }
  SpillEvicted();
  return kept;
}

void Scheduler::KeepSharedPrefix(Running& r) {
  if (options_.prompt_cache_bytes == 0 || !r.request.cache_prompt || r.sequence == nullptr) return;
  const Sequence& saver = *r.sequence;
  const auto same_kind = [&saver](const SequenceState& kept) { return saver.CanLoadState(kept); };
  const std::span<const int32_t> prefix(r.request.prompt.data(), r.prompt_fed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (prompt_cache_.Holds(prefix, same_kind)) return;  // kept once, for all
  }
  SequenceState state;
  saver.SaveState(state);
  {
    std::lock_guard<std::mutex> lock(mu_);
    (void)prompt_cache_.Insert(std::vector<int32_t>(prefix.begin(), prefix.end()),
                               std::move(state), PromptCacheLimit(), same_kind, /*shared=*/true);
    stats_.prompt_cache_shared_kept += 1;
    UpdateCacheStats();
  }
  SpillEvicted();
}

void Scheduler::SpillEvicted() {
  if (options_.state_dir == nullptr) return;
  std::vector<PromptCache::Evicted> evicted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    evicted = prompt_cache_.TakeEvicted();
  }
  // A state the disk cannot take is only lost from the cache: the request
  // that made it has its answer.
  for (const PromptCache::Evicted& e : evicted) (void)options_.state_dir->Put(e.tokens, e.state);
}

void Scheduler::UpdateCacheStats() {
  stats_.prompt_cache_bytes = prompt_cache_.bytes();
  stats_.prompt_cache_entries = static_cast<int32_t>(prompt_cache_.size());
  stats_.prompt_cache_evictions = prompt_cache_.evictions();
}

void Scheduler::Resume(Running& r) {
  if (options_.prompt_cache_bytes == 0 || !r.request.cache_prompt) return;
  Sequence& sequence = *r.sequence;
  const auto can_load = [&sequence](const SequenceState& kept) {
    return sequence.CanLoadState(kept);
  };
  size_t resumed = 0;
  {
    // Loaded under the lock: another thread's restore or erase may drop
    // the entry the moment it is let go.
    std::lock_guard<std::mutex> lock(mu_);
    if (auto hit = prompt_cache_.Find(r.request.prompt, can_load)) {
      sequence.LoadState(*hit->state);
      resumed = hit->n_tokens;
    }
  }
  if (options_.state_dir != nullptr) {
    // A longer state on disk (dropped from RAM, or kept before a restart).
    if (auto stored = options_.state_dir->Find(r.request.prompt, sequence.kv_plan_text(),
                                               resumed, can_load)) {
      sequence.LoadState(stored->state);
      resumed = stored->tokens.size();
    }
  }
  if (resumed == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.prompt_cache_hits += 1;
    stats_.prompt_cache_tokens_reused += static_cast<int64_t>(resumed);
  }
  r.prompt_fed = resumed;
  r.cached_tokens = static_cast<int32_t>(resumed);
  // The whole prompt was kept, with the logits after it: its first token
  // is sampled now, as a forward pass would have let it be.
  if (!r.prefilling()) Emit(r, r.state.Next(sequence.last_logits()));
}

size_t Scheduler::PersistPromptCache() {
  if (options_.state_dir == nullptr) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  size_t written = 0;
  prompt_cache_.ForEach([&](std::span<const int32_t> tokens, const SequenceState& state) {
    if (options_.state_dir->Put(tokens, state).ok()) written += 1;
  });
  return written;
}

Result<size_t> Scheduler::SaveKept(std::span<const int32_t> tokens, const std::string& name) {
  if (options_.state_dir == nullptr) {
    return Status::Error("saving a conversation needs a cache directory (h2o serve --cache-dir)");
  }
  H2O_RETURN_IF_ERROR(StateDir::CheckName(name));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const SequenceState* state = prompt_cache_.FindExact(tokens)) {
      return options_.state_dir->SaveNamed(name, tokens, *state);
    }
  }
  H2O_ASSIGN_OR_RETURN(const std::optional<size_t> copied,
                       options_.state_dir->CopyToNamed(tokens, name));
  if (!copied) return Status::Error("its state is no longer kept (the prompt cache dropped it)");
  return *copied;
}

Result<std::optional<Scheduler::Restored>> Scheduler::RestoreSaved(const std::string& name) {
  if (options_.state_dir == nullptr) {
    return Status::Error("restoring a conversation needs a cache directory (h2o serve --cache-dir)");
  }
  H2O_ASSIGN_OR_RETURN(std::optional<StoredState> stored, options_.state_dir->ReadNamed(name));
  if (!stored) return std::optional<Restored>();
  const Restored restored{stored->tokens.size(), stored->file_bytes};
  const std::string plan = stored->state.kv_plan;
  const bool pos_shift = stored->state.pos_shift;
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    kept = prompt_cache_.Insert(std::move(stored->tokens), std::move(stored->state),
                                PromptCacheLimit(), [&](const SequenceState& s) {
                                  return s.kv_plan == plan && s.pos_shift == pos_shift;
                                });
    UpdateCacheStats();
  }
  SpillEvicted();
  if (!kept) {
    return Status::Error(
        "the saved state is larger than the prompt cache's free room (--cache-ram, or KV memory "
        "the running requests hold)");
  }
  return std::optional<Restored>(restored);
}

size_t Scheduler::EraseKept(std::span<const int32_t> tokens) {
  size_t erased = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    erased = prompt_cache_.EraseWithin(tokens);
    UpdateCacheStats();
  }
  if (options_.state_dir != nullptr) erased += options_.state_dir->EraseWithin(tokens);
  return erased;
}

}  // namespace h2o
