// A fixed set of worker threads for data-parallel loops (MatVec rows,
// attention heads). Workers are created once in the constructor; between
// calls each spins for up to ~50 us (pause, then yield the CPU) on an
// atomic generation counter and only then sleeps on a condition variable,
// so the ~100 loops of a decoded token do not each pay a futex wake-up
// (about 1 us per call instead of 6-16 us on the 2-core dev VM). The
// calling thread does the first share of every loop and likewise spins
// briefly for the others to finish before it sleeps.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace h2o::kernels {

// Bytes of weights (times tokens, for a product of many) below which a
// product runs on the caller alone: waking the workers costs microseconds,
// and a matrix this small is done sooner without them.
inline constexpr size_t kMinPoolBytes = 64 * 1024;

// A non-owning reference to a callable fn(begin, end). Unlike a
// std::function it never allocates, so a per-token ParallelFor costs no
// heap traffic. The callable must outlive the call it is passed to.
class RangeFn {
 public:
  template <typename F>
  RangeFn(F&& fn)  // NOLINT: implicit, so lambdas pass straight in
      : object_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* object, int64_t begin, int64_t end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(begin, end);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

// The same for fn(thread, begin, end), thread being the index in [0,
// ThreadPool::size()) of the thread that runs the range (for per-thread
// scratch).
class ThreadRangeFn {
 public:
  template <typename F>
  ThreadRangeFn(F&& fn)  // NOLINT: implicit, so lambdas pass straight in
      : object_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* object, int thread, int64_t begin, int64_t end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(thread, begin, end);
        }) {}
  void operator()(int thread, int64_t begin, int64_t end) const {
    call_(object_, thread, begin, end);
  }

 private:
  void* object_;
  void (*call_)(void*, int, int64_t, int64_t);
};

class ThreadPool {
 public:
  // n_threads counts the caller: n_threads - 1 workers are started.
  // n_threads < 1 is treated as 1 (no workers, everything inline).
  explicit ThreadPool(int n_threads);
  ~ThreadPool();  // joins the workers

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads taking part in ParallelFor, the caller included.
  int size() const { return n_threads_; }

  // Runs fn(begin, end) over [0, n) split into size() contiguous ranges of
  // near-equal length, one per thread; the caller runs the first. Empty
  // ranges are skipped, so fn is never called when n <= 0. Blocks until all
  // ranges are done; what fn wrote is then visible to the caller. fn must
  // not throw. Not reentrant: fn must not call ParallelFor on this pool,
  // and two threads must not call it at once (checked).
  void ParallelFor(int64_t n, RangeFn fn);

  // Runs fn(thread, begin, end) over [0, n) in chunks of `grain` (the last
  // one shorter), `thread` being the index in [0, size()) of the thread
  // running it (the caller is 0). Each thread starts on its own contiguous
  // share of the chunks and runs it front to back, so its reads stay one
  // stream; a thread out of chunks takes the last chunk left in another's
  // share. A thread the machine slows down thus does less instead of
  // holding the others up at the end, which equal shares cannot avoid on a
  // shared VM. With `prepare`, every thread first runs prepare(thread,
  // begin, end) on its equal share of [0, n_prepare), and no chunk starts
  // before all of that is done: input that every chunk reads, made in
  // parallel without a second hand-off. Same contract as ParallelFor
  // otherwise; requires grain >= 1.
  void ParallelForClaimed(int64_t n, int64_t grain, ThreadRangeFn fn, int64_t n_prepare = 0,
                          const ThreadRangeFn* prepare = nullptr);

 private:
  void WorkerLoop(int index);

  const int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;  // only for sleeping and waking; the hand-off is atomic
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  // Bumped once per ParallelFor call (release: publishes fn_ and n_).
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};               // workers not yet done with this generation
  std::atomic<int> sleepers_{0};              // workers asleep (or about to be) on start_cv_
  std::atomic<bool> caller_sleeping_{false};  // the caller waits on done_cv_
  std::atomic<bool> stop_{false};
  std::atomic<bool> busy_{false};  // a ParallelFor call is in progress
  const RangeFn* fn_ = nullptr;    // written by the caller before the bump
  int64_t n_ = 0;

  // ParallelForClaimed's state: per thread, the chunks [front, back) of its
  // share not yet taken (front << 32 | back), a cache line each; and how
  // many threads have finished `prepare`.
  int64_t Claim(int thread);
  struct alignas(64) ClaimRange {
    std::atomic<uint64_t> chunks{0};
  };
  std::vector<ClaimRange> shares_;
  std::atomic<int> prepared_{0};
};

}  // namespace h2o::kernels
