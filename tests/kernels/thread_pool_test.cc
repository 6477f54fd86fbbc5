#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace h2o::kernels {
namespace {

struct Call {
  int64_t begin, end;
  std::thread::id thread;
};

// Runs one ParallelFor and records every call.
std::vector<Call> Record(ThreadPool& pool, int64_t n) {
  std::mutex mu;
  std::vector<Call> calls;
  pool.ParallelFor(n, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back({begin, end, std::this_thread::get_id()});
  });
  return calls;
}

TEST(ThreadPoolTest, SizeCountsTheCaller) {
  EXPECT_EQ(ThreadPool(1).size(), 1);
  EXPECT_EQ(ThreadPool(4).size(), 4);
  EXPECT_EQ(ThreadPool(0).size(), 1);
  EXPECT_EQ(ThreadPool(-3).size(), 1);
}

TEST(ThreadPoolTest, ZeroOrNegativeNeverCallsFn) {
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    EXPECT_TRUE(Record(pool, 0).empty());
    EXPECT_TRUE(Record(pool, -5).empty());
  }
}

TEST(ThreadPoolTest, CoversEachIndexOnceWithOneContiguousRangePerThread) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 3, 4, 5, 7, 100, 1001}) {
      const std::vector<Call> calls = Record(pool, n);
      std::vector<int> hits(n, 0);
      std::set<std::thread::id> threads_used;
      bool caller_ran_first_range = false;
      for (const Call& call : calls) {
        ASSERT_LT(call.begin, call.end) << "threads=" << threads << " n=" << n;  // no empty calls
        for (int64_t i = call.begin; i < call.end; ++i) ++hits[i];
        threads_used.insert(call.thread);
        if (call.begin == 0) caller_ran_first_range = call.thread == std::this_thread::get_id();
      }
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "threads=" << threads << " n=" << n;
      EXPECT_EQ(calls.size(), static_cast<size_t>(std::min<int64_t>(n, threads)))
          << "threads=" << threads << " n=" << n;
      EXPECT_EQ(threads_used.size(), calls.size()) << "threads=" << threads << " n=" << n;
      EXPECT_TRUE(caller_ran_first_range) << "threads=" << threads << " n=" << n;
    }
  }
}

TEST(ThreadPoolTest, RangesRunConcurrently) {
  // Every range waits until all have started: only possible if each runs
  // on its own thread at the same time. Bounded wait so a failure cannot hang.
  const int threads = 3;
  ThreadPool pool(threads);
  std::atomic<int> arrived{0};
  std::atomic<bool> all_met{true};
  pool.ParallelFor(threads, [&](int64_t, int64_t) {
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < threads) {
      if (std::chrono::steady_clock::now() > deadline) {
        all_met = false;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_TRUE(all_met.load());
}

TEST(ThreadPoolTest, ThousandRepeatedCallsAccumulateCorrectly) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    const int64_t n = 10;
    // Plain (non-atomic) writes: ParallelFor's return must publish them.
    std::vector<int64_t> sums(n, 0);
    for (int iter = 0; iter < 1000; ++iter) {
      const int64_t size = 1 + iter % n;  // also sizes below the thread count
      pool.ParallelFor(size, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) sums[i] += iter;
      });
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t expected = 0;
      for (int iter = 0; iter < 1000; ++iter) {
        if (i < 1 + iter % n) expected += iter;
      }
      EXPECT_EQ(sums[i], expected) << "threads=" << threads << " i=" << i;
    }
  }
}

// Threads of this process, from /proc (Linux). Other tests' pools are gone
// by then: gtest runs tests one at a time.
int64_t ProcessThreads() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator());
}

// ProcessThreads() once it is `want`, or whatever it is after 10 s: a joined
// thread's entry can outlive the join by a moment.
int64_t ProcessThreadsOnceAt(int64_t want) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int64_t n = ProcessThreads();
  while (n != want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = ProcessThreads();
  }
  return n;
}

TEST(ThreadPoolTest, ConstructAndDestroyWithoutUse) {
  // A pool never used still starts its workers, and its destructor joins
  // every one of them: none is left running, however quickly it is torn down.
  // A sanitizer runtime starts a helper thread with the first thread the
  // process creates: a pool before counting, so `before` includes it.
  { ThreadPool warm_up(2); }
  int64_t before = ProcessThreads();
  for (int still = 0; still < 20; ++still) {  // the warm-up's workers may take a moment to go
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int64_t now = ProcessThreads();
    if (now != before) still = 0;
    before = now;
  }
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(3);
    EXPECT_EQ(ProcessThreadsOnceAt(before + 2), before + 2) << "iteration " << i;
  }
  EXPECT_EQ(ProcessThreadsOnceAt(before), before);
}

}  // namespace
}  // namespace h2o::kernels
