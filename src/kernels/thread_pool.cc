// Hand-off: the caller writes fn_, n_ and pending_, then bumps generation_
// (seq_cst, so also a release); a worker that sees a new generation
// (acquire) runs its share and decrements pending_ (acq_rel); the caller
// returns only once pending_ == 0, so a worker can never skip or repeat a
// generation and fn_ stays valid while any worker may read it.
//
// Waiting is a bounded spin, then a condition variable. No wake-up is lost:
// a worker going to sleep increments sleepers_ and then re-checks
// generation_ under mu_, while the caller bumps generation_ and then reads
// sleepers_ (all seq_cst): either the worker sees the new generation, or
// the caller sees the sleeper and notifies after taking mu_ (which the
// worker holds from its check until it is waiting). Completion is the
// mirror image with caller_sleeping_ and pending_.
#include "kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "core/status.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace h2o::kernels {
namespace {

// How long a thread spins before sleeping: longer than the gap between the
// loops of one token (norms, RoPE: microseconds), short enough that idle
// workers on a shared machine give their core back almost at once.
constexpr std::chrono::microseconds kSpin(50);
// The first part of it, before any yield.
constexpr std::chrono::microseconds kPauseOnly(20);

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls done() for up to kSpin, pausing (and after kPauseOnly yielding the
// CPU) in between; returns whether it became true.
template <typename Done>
bool SpinUntil(Done done) {
  if (done()) return true;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + kSpin;
  // Pausing only, at first: a yield is a system call, and on a VM the
  // other thread's finish then waits for it to return (a 110M 32-sequence
  // decode step, ~130 hand-offs, 1.3-3.9% faster with 10-50 us of this,
  // alternating steps in one run).
  const auto pause_until = start + kPauseOnly;
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      CpuRelax();
      if (done()) return true;
    }
    if (std::chrono::steady_clock::now() < pause_until) continue;
    // Pausing alone is not enough: the kernel likes to wake a thread on its
    // waker's CPU, and two threads spinning for each other on one CPU (or
    // on a machine shared with other processes) would each burn a whole
    // time slice. Yielding lets the other one run there.
    std::this_thread::yield();
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

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

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads < 1 ? 1 : n_threads), shares_(static_cast<size_t>(n_threads_)) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, RangeFn fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    fn(0, n);
    return;
  }
  H2O_CHECK(!busy_.exchange(true, std::memory_order_acquire));  // reentrant or concurrent call
  fn_ = &fn;
  n_ = n;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    start_cv_.notify_all();
  }
  const auto [begin, end] = Share(n, 0, size());
  if (begin < end) fn(begin, end);
  if (!SpinUntil([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeping_.store(true);
    done_cv_.wait(lock, [this] { return pending_.load() == 0; });
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }
  fn_ = nullptr;
  busy_.store(false, std::memory_order_release);
}

int64_t ThreadPool::Claim(int thread) {
  const int parts = size();
  for (int k = 0; k < parts; ++k) {
    std::atomic<uint64_t>& chunks = shares_[(thread + k) % parts].chunks;
    uint64_t range = chunks.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t front = range >> 32, back = range & 0xFFFFFFFFu;
      if (front >= back) break;
      // The owner takes its front, others the back.
      const uint64_t taken = k == 0 ? range + (uint64_t{1} << 32) : range - 1;
      if (chunks.compare_exchange_weak(range, taken, std::memory_order_relaxed)) {
        return static_cast<int64_t>(k == 0 ? front : back - 1);
      }
    }
  }
  return -1;
}

void ThreadPool::ParallelForClaimed(int64_t n, int64_t grain, ThreadRangeFn fn, int64_t n_prepare,
                                    const ThreadRangeFn* prepare) {
  H2O_CHECK(grain >= 1);
  const int64_t chunks = n > 0 ? (n - 1) / grain + 1 : 0;
  H2O_CHECK(chunks <= 0xFFFFFFFF);
  auto run = [&](int64_t c, int thread) { fn(thread, c * grain, std::min(n, (c + 1) * grain)); };
  if (workers_.empty()) {
    if (prepare != nullptr && n_prepare > 0) (*prepare)(0, 0, n_prepare);
    for (int64_t c = 0; c < chunks; ++c) run(c, 0);
    return;
  }
  const int parts = size();
  for (int t = 0; t < parts; ++t) {
    const auto [front, back] = Share(chunks, t, parts);
    shares_[t].chunks.store(static_cast<uint64_t>(front) << 32 | static_cast<uint64_t>(back),
                            std::memory_order_relaxed);
  }
  prepared_.store(0, std::memory_order_relaxed);
  // One index per thread (Share gives each thread exactly its own); the
  // stores above are published by ParallelFor's hand-off.
  ParallelFor(parts, [&](int64_t begin, int64_t end) {
    for (int64_t index = begin; index < end; ++index) {
      const int thread = static_cast<int>(index);
      if (prepare != nullptr) {
        const auto [first, last] = Share(n_prepare, thread, parts);
        if (first < last) (*prepare)(thread, first, last);
        prepared_.fetch_add(1, std::memory_order_acq_rel);
        // Every thread is in this call, so the wait ends; it only spins
        // (pause, then yield), as the others are a few microseconds away.
        while (!SpinUntil([&] { return prepared_.load(std::memory_order_acquire) == parts; })) {
        }
      }
      for (int64_t c = Claim(thread); c >= 0; c = Claim(thread)) run(c, thread);
    }
  });
}

void ThreadPool::WorkerLoop(int index) {
  const int parts = n_threads_;
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] {
      return stop_.load(std::memory_order_relaxed) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (!SpinUntil(ready)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1);
      start_cv_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_relaxed)) return;
    seen = generation_.load(std::memory_order_acquire);
    const RangeFn* fn = fn_;
    const auto [begin, end] = Share(n_, index, parts);
    if (begin < end) (*fn)(begin, end);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      { std::lock_guard<std::mutex> lock(mu_); }
      done_cv_.notify_one();
    }
  }
}

}  // namespace h2o::kernels
