// Each pass is one ThreadPool::ParallelFor over n_threads blocks, so each
// thread reads exactly its own part (the part it first touched, which keeps
// the pages on its NUMA node). Two readers are timed and the faster one
// counts: an integer sum over uint64_t with independent lanes (vectorized
// without -ffast-math) and the active backend's f32 dot product of the part
// with itself (each line comes from memory once; the second operand hits in
// cache), which streams with the same SIMD loads and software prefetch as
// the decode kernels. The integer sum alone, compiled for any x86-64,
// read slower than the AVX2 decode kernels do, so decode showed above 100%
// of its "roofline". The results are folded into a value the caller
// observes so the reads cannot be optimized away.
#include "perf/membw.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/quant.h"
#include "kernels/thread_pool.h"

namespace h2o {
namespace {

uint64_t SumWords(const uint64_t* data, size_t n) {
  constexpr int kLanes = 8;
  uint64_t acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += data[i + l];
  }
  for (; i < n; ++i) acc[0] += data[i];
  uint64_t total = 0;
  for (int l = 0; l < kLanes; ++l) total += acc[l];
  return total;
}

uint64_t SumBySelfDot(const uint64_t* data, size_t n_words) {
  const auto* x = reinterpret_cast<const float*>(data);
  const float dot = kernels::DotRow(TensorType::kF32, x, x, static_cast<int64_t>(n_words * 2));
  uint64_t bits = 0;
  std::memcpy(&bits, &dot, sizeof(dot));
  return bits;
}

}  // namespace

double MeasureMemoryBandwidthGbps(const MemBwOptions& options) {
  const int n_threads = std::max<int32_t>(1, options.n_threads);
  const int passes = std::max<int32_t>(1, options.passes);
  // Whole 64-byte lines per thread, at least one.
  constexpr size_t kLine = 64;
  const size_t per_thread_bytes = std::max(kLine, options.buffer_bytes / n_threads / kLine * kLine);
  const size_t per_thread_words = per_thread_bytes / sizeof(uint64_t);
  const size_t total_words = per_thread_words * n_threads;

  // Uninitialized storage: the first write happens on the owning thread.
  // Every word holds two small finite floats, so the dot stays finite.
  std::unique_ptr<uint64_t[]> buffer(new uint64_t[total_words]);
  kernels::ThreadPool pool(n_threads);
  // One sum per thread, 64 bytes apart against false sharing.
  std::vector<uint64_t> sums(static_cast<size_t>(n_threads) * 8, 0);
  pool.ParallelFor(n_threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      uint64_t* part = buffer.get() + t * per_thread_words;
      for (size_t i = 0; i < per_thread_words; ++i) {
        const float pair[2] = {static_cast<float>(i % 7) * 0.125f, static_cast<float>(t)};
        std::memcpy(&part[i], pair, sizeof(pair));
      }
    }
  });

  double best_seconds = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < passes; ++pass) {
    for (auto* read : {SumWords, SumBySelfDot}) {
      const auto start = std::chrono::steady_clock::now();
      pool.ParallelFor(n_threads, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          sums[t * 8] += read(buffer.get() + t * per_thread_words, per_thread_words);
        }
      });
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      best_seconds = std::min(best_seconds, elapsed.count());
    }
  }
  // Observe the sums so the passes have an effect.
  static std::atomic<uint64_t> sink{0};
  uint64_t folded = 0;
  for (int t = 0; t < n_threads; ++t) folded ^= sums[t * 8];
  sink.store(folded, std::memory_order_relaxed);

  // A clock too coarse to see the pass would give infinity: bound it.
  best_seconds = std::max(best_seconds, 1e-9);
  return static_cast<double>(total_words * sizeof(uint64_t)) / best_seconds / 1e9;
}

}  // namespace h2o
