// Main-memory read bandwidth, measured the way decode reads weights: every
// thread streams through its own contiguous part of one large buffer, with
// a plain vectorizable reduction and with the active kernel backend's f32
// dot (its SIMD loads and prefetching), the faster counting. It is the
// numerator of the decode roofline
// (tok/s <= bandwidth / bytes read per token) that `h2o bench` reports.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h2o {

struct MemBwOptions {
  int32_t n_threads = 1;             // readers; < 1 is treated as 1
  size_t buffer_bytes = 256u << 20;  // total buffer, split evenly between the threads
  int32_t passes = 5;                // timed passes over the whole buffer (< 1: 1)
};

// Allocates and fills the buffer (untimed, each thread touching its own part
// first), then times `passes` parallel read passes of each reader and
// returns the best one in GB/s (1e9 bytes per second): a positive, finite
// number. Takes roughly buffer_bytes * (2 passes + 2) / bandwidth (about 1 s
// for the defaults on a 10 GB/s machine). Thread-safe; allocates buffer_bytes for the duration.
double MeasureMemoryBandwidthGbps(const MemBwOptions& options);

}  // namespace h2o
