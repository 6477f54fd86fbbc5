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

struct Claimed {
  int thread;
  int64_t begin, end;
  std::thread::id id;
};

// Runs one ParallelForClaimed and records every chunk.
std::vector<Claimed> RecordClaimed(ThreadPool& pool, int64_t n, int64_t grain) {
  std::mutex mu;
  std::vector<Claimed> chunks;
  pool.ParallelForClaimed(n, grain, [&](int thread, int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    chunks.push_back({thread, begin, end, std::this_thread::get_id()});
  });
  return chunks;
}

TEST(ThreadPoolTest, ClaimedChunksCoverEachIndexOnceOnGrainBoundaries) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 5, 7, 64, 1001}) {
      for (int64_t grain : {1, 3, 16, 2000}) {
        const std::vector<Claimed> chunks = RecordClaimed(pool, n, grain);
        std::vector<int> hits(static_cast<size_t>(n), 0);
        std::vector<std::set<std::thread::id>> ids(static_cast<size_t>(threads));
        for (const Claimed& c : chunks) {
          ASSERT_EQ(c.begin % grain, 0);
          ASSERT_EQ(c.end, std::min(n, c.begin + grain));
          ASSERT_GE(c.thread, 0);
          ASSERT_LT(c.thread, threads);
          ids[c.thread].insert(c.id);
          for (int64_t i = c.begin; i < c.end; ++i) ++hits[i];
        }
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(hits[i], 1) << "threads=" << threads << " n=" << n << " grain=" << grain;
        }
        // An index names one thread (scratch per thread relies on it), the
        // caller's is 0.
        for (int t = 0; t < threads; ++t) EXPECT_LE(ids[t].size(), 1u);
        if (!ids[0].empty()) {
          EXPECT_EQ(*ids[0].begin(), std::this_thread::get_id());
        }
      }
    }
  }
}

TEST(ThreadPoolTest, EachThreadStartsOnItsOwnShareInOrder) {
  // Every thread's first chunk waits until all threads have one (bounded),
  // so none can run out of its own share before the others start; what a
  // thread runs of its own share then comes front to back.
  const int threads = 3;
  ThreadPool pool(threads);
  const int64_t n = 30;
  std::mutex mu;
  std::vector<std::vector<int64_t>> order(threads);
  std::atomic<int> arrived{0};
  pool.ParallelForClaimed(n, 1, [&](int thread, int64_t begin, int64_t) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      first = order[thread].empty();
      order[thread].push_back(begin);
    }
    if (!first) return;
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < threads && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  for (int t = 0; t < threads; ++t) {
    const int64_t first = n * t / threads, last = n * (t + 1) / threads;
    ASSERT_FALSE(order[t].empty()) << "thread " << t;
    EXPECT_EQ(order[t].front(), first) << "thread " << t;
    int64_t next = first;
    for (int64_t c : order[t]) {
      if (c < first || c >= last) continue;
      EXPECT_EQ(c, next) << "thread " << t;
      next = c + 1;
    }
  }
}

TEST(ThreadPoolTest, AThreadOutOfChunksTakesASlowThreadsLastOnes) {
  // The caller stalls in its first chunk; the worker, done with its own
  // share, runs the rest of the caller's from the back. On a loaded machine
  // the caller may be descheduled before it claims its first chunk, and the
  // worker then rightly runs all eight: the run is repeated until the
  // caller did claim it.
  ThreadPool pool(2);
  const int64_t n = 8;
  std::atomic<int> worker_chunks{0};
  std::atomic<bool> stalled{false};
  for (int attempt = 0; attempt < 50 && !stalled; ++attempt) {
    worker_chunks = 0;
    pool.ParallelForClaimed(n, 1, [&](int thread, int64_t begin, int64_t) {
      if (thread == 0 && begin == 0) {
        stalled = true;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (worker_chunks.load() < n - 1 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      }
      if (thread == 1) worker_chunks.fetch_add(1);
    });
  }
  ASSERT_TRUE(stalled.load());
  EXPECT_EQ(worker_chunks.load(), n - 1);
}

TEST(ThreadPoolTest, PrepareIsDoneEverywhereBeforeAnyChunk) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int iter = 0; iter < 200; ++iter) {
      const int64_t n_prepare = 1 + iter % 37, n = 1 + iter % 11;
      // Plain writes in prepare, read by every chunk: the wait must publish them.
      std::vector<int64_t> prepared(static_cast<size_t>(n_prepare), -1);
      std::vector<int> prepare_hits(static_cast<size_t>(n_prepare), 0);
      std::atomic<bool> all_seen{true};
      std::atomic<int64_t> chunks{0};
      auto fill = [&](int, int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          prepared[i] = i * iter;
          ++prepare_hits[i];
        }
      };
      const ThreadRangeFn prepare(fill);
      pool.ParallelForClaimed(
          n, 1,
          [&](int, int64_t, int64_t) {
            for (int64_t i = 0; i < n_prepare; ++i) {
              if (prepared[i] != i * iter) all_seen = false;
            }
            chunks.fetch_add(1);
          },
          n_prepare, &prepare);
      ASSERT_TRUE(all_seen.load()) << "threads=" << threads << " iter=" << iter;
      ASSERT_EQ(chunks.load(), n);
      for (int h : prepare_hits) ASSERT_EQ(h, 1);
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
