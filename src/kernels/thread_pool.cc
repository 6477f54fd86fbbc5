// Workers sleep on start_cv_ until generation_ changes, run their share of
// that generation's loop, and decrement pending_; the caller waits for
// pending_ == 0 before returning, so a worker can never skip or repeat a
// generation and fn_ stays valid while any worker may read it.
#include "kernels/thread_pool.h"

#include <algorithm>
#include <utility>

#include "core/status.h"

namespace h2o::kernels {
namespace {

// Range `index` of `parts` contiguous ranges of [0, n) whose lengths differ
// by at most one, longer ones first: when n < parts the caller (index 0)
// still gets work instead of waiting idle.
std::pair<int64_t, int64_t> Share(int64_t n, int index, int parts) {
  const int64_t base = n / parts;
  const int64_t extra = n % parts;
  const int64_t begin = index * base + std::min<int64_t>(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, RangeFn fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    fn(0, n);
    return;
  }
  const int parts = size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    H2O_CHECK(!busy_);  // reentrant or concurrent call
    busy_ = true;
    fn_ = &fn;
    n_ = n;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  const auto [begin, end] = Share(n, 0, parts);
  if (begin < end) fn(begin, end);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  fn_ = nullptr;
  busy_ = false;
}

void ThreadPool::WorkerLoop(int index) {
  const int parts = n_threads_;
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const auto* fn = fn_;
    const auto [begin, end] = Share(n_, index, parts);
    lock.unlock();
    if (begin < end) (*fn)(begin, end);
    lock.lock();
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

}  // namespace h2o::kernels
