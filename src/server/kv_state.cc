#include "server/kv_state.h"

#include <algorithm>
#include <utility>

namespace h2o::server {
namespace {

size_t StateBytes(const KvState& s) {
  return sizeof(s) + s.cache.MemoryBytes() + s.tokens.size() * sizeof(int32_t);
}

std::shared_ptr<const KvState> Capture(const Sequence& sequence,
                                       const std::vector<int32_t>& tokens, bool final) {
  auto state = std::make_shared<KvState>();
  const KvCache& cache = sequence.cache();
  const KvCacheConfig& c = cache.config();
  state->cache = TakeKvSnapshot(cache);
  state->n_past = sequence.n_past();
  state->tokens.assign(tokens.begin(),
                       tokens.begin() + std::min<size_t>(tokens.size(), state->n_past));
  state->kv_bytes = cache.AllocatedBytes();
  state->kv_bytes_full = KvCache::FullCacheBytes(c.n_layer, c.n_head_kv, c.head_dim, c.types,
                                                 state->n_past, c.layer_window);
  // As Scheduler::CacheEvictions: every token enters every (layer, head).
  int64_t kept = 0;
  for (const KvSnapshot::Head& h : state->cache.heads) kept += std::ssize(h.positions);
  state->evictions = int64_t{state->n_past} * std::ssize(state->cache.heads) - kept;
  state->kv_bytes_kept =
      static_cast<size_t>(kept) * KvCache::FullCacheBytes(1, 1, c.head_dim, c.types, 1);
  state->finished = final;
  return state;
}

}  // namespace

struct KvStateStore::Entry {
  std::string id;
  int32_t owner = -1;
  std::vector<int32_t> tokens;      // driver thread only
  std::atomic<bool> wanted{false};  // an HTTP thread asked for a fresh snapshot
  // Under the store's mutex:
  std::shared_ptr<const KvState> state;
  uint64_t version = 0;
  bool done = false;
  size_t bytes = 0;
};

KvStateStore::KvStateStore(size_t keep_finished, size_t keep_finished_bytes)
    : keep_finished_(std::max<size_t>(1, keep_finished)),
      keep_finished_bytes_(keep_finished_bytes) {}

KvStateStore::Tracker::Tracker(KvStateStore& store, std::shared_ptr<Entry> entry)
    : store_(store), entry_(std::move(entry)) {}

void KvStateStore::Tracker::AddToken(int32_t id) { entry_->tokens.push_back(id); }

void KvStateStore::Tracker::OnCache(const Sequence& sequence, bool final) {
  if (!final && !entry_->wanted.exchange(false)) return;
  store_.Publish(*entry_, Capture(sequence, entry_->tokens, final));
}

void KvStateStore::Tracker::Done() { store_.Retire(entry_); }

std::unique_ptr<KvStateStore::Tracker> KvStateStore::Track(const std::string& id,
                                                           std::vector<int32_t> prompt,
                                                           int32_t owner) {
  auto entry = std::make_shared<Entry>();
  entry->id = id;
  entry->owner = owner;
  entry->tokens = std::move(prompt);
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[id] = entry;
  }
  return std::make_unique<Tracker>(*this, std::move(entry));
}

void KvStateStore::Publish(Entry& entry, std::shared_ptr<const KvState> state) {
  const size_t bytes = StateBytes(*state);
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry.state = std::move(state);
    entry.bytes = bytes;
    entry.version += 1;
  }
  published_.notify_all();
}

void KvStateStore::Retire(const std::shared_ptr<Entry>& entry) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->done = true;
    if (entry->state == nullptr) {
      entries_.erase(entry->id);
    } else {
      finished_.push_back(entry);
      finished_bytes_ += entry->bytes;
      while (finished_.size() > keep_finished_ ||
             (finished_.size() > 1 && finished_bytes_ > keep_finished_bytes_)) {
        finished_bytes_ -= finished_.front()->bytes;
        entries_.erase(finished_.front()->id);
        finished_.pop_front();
      }
    }
  }
  published_.notify_all();
}

std::optional<std::shared_ptr<const KvState>> KvStateStore::Get(
    const std::string& id, int32_t reader, std::chrono::milliseconds wait,
    const std::function<void()>& wake) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second->owner != reader) return std::nullopt;
  std::shared_ptr<Entry> entry = it->second;
  if (!entry->done && wait.count() > 0) {
    const uint64_t seen = entry->version;
    entry->wanted = true;
    lock.unlock();
    wake();
    lock.lock();
    published_.wait_for(lock, wait, [&] { return entry->version != seen || entry->done; });
  }
  return entry->state;
}

}  // namespace h2o::server
