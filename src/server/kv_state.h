// What GET /v1/kv/{id} reads: each request's latest cache snapshot, kept
// for running requests and for the last few finished ones.
//
// Threading: the scheduler's driver thread owns every cache. It is the
// only thread that reads one, and only at step boundaries
// (Request::on_cache); there it copies the cache into an immutable
// KvState and publishes a shared_ptr to it under the store's mutex. HTTP
// threads only ever see those copies, so no cache is read while a step
// changes it. A running request is copied only when someone asked (Get
// sets a flag the next step boundary consumes) and once when it ends, so
// requests nobody watches pay one copy each.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/kv_snapshot.h"
#include "runtime/sequence.h"

namespace h2o::server {

struct KvState {
  KvSnapshot cache;
  std::vector<int32_t> tokens;  // the token id at each position 0..n_past-1
  int32_t n_past = 0;
  size_t kv_bytes = 0;       // allocated for the request's cache
  size_t kv_bytes_kept = 0;  // the K/V rows it holds now
  size_t kv_bytes_full = 0;  // what a full cache of n_past tokens would need
  int64_t evictions = 0;     // (layer, head) slots each token entered and left
  bool finished = false;
};

class KvStateStore {
  struct Entry;

 public:
  // Finished requests kept: the newest `keep_finished`, and fewer when
  // their snapshots pass `keep_finished_bytes` (the newest always stays).
  KvStateStore(size_t keep_finished, size_t keep_finished_bytes);

  // One request's side of the store, used on the driver thread.
  class Tracker {
   public:
    Tracker(KvStateStore& store, std::shared_ptr<Entry> entry);
    void AddToken(int32_t id);  // a generated token (it enters the cache next step)
    void OnCache(const Sequence& sequence, bool final);
    // The request ended: its last snapshot joins the finished ones (or,
    // without one, the id is forgotten).
    void Done();

   private:
    KvStateStore& store_;
    std::shared_ptr<Entry> entry_;
  };

  // `owner` is who may read it back: the index of the API key that made
  // the request (-1 when the server has no keys).
  std::unique_ptr<Tracker> Track(const std::string& id, std::vector<int32_t> prompt,
                                 int32_t owner);

  // nullopt: unknown id (never seen, no longer kept, or made under another
  // API key than `reader`'s: the two are not told apart). Otherwise the
  // latest state, null while the request waits in the queue. For a running
  // request, asks for a fresh snapshot (calling `wake` so the driver takes
  // a step) and waits up to `wait` for it.
  std::optional<std::shared_ptr<const KvState>> Get(const std::string& id, int32_t reader,
                                                    std::chrono::milliseconds wait,
                                                    const std::function<void()>& wake);

 private:
  void Publish(Entry& entry, std::shared_ptr<const KvState> state);
  void Retire(const std::shared_ptr<Entry>& entry);

  const size_t keep_finished_;
  const size_t keep_finished_bytes_;
  std::mutex mu_;
  std::condition_variable published_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;
  std::deque<std::shared_ptr<Entry>> finished_;  // oldest first
  size_t finished_bytes_ = 0;
};

}  // namespace h2o::server
