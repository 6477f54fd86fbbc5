#include "eval/membw.h"

#include <gtest/gtest.h>

#include <cmath>

namespace h2o {
namespace {

TEST(MemBw, PositiveAndFinite) {
  for (int32_t threads : {1, 2}) {
    const double gbps = MeasureMemoryBandwidthGbps({threads, size_t{8} << 20, 2});
    EXPECT_GT(gbps, 0.0) << threads << " threads";
    EXPECT_TRUE(std::isfinite(gbps)) << threads << " threads";
  }
}

TEST(MemBw, TinyAndOddSizesAreSafe) {
  // Smaller than a line per thread, and a thread count that does not divide it.
  EXPECT_GT(MeasureMemoryBandwidthGbps({3, 100, 1}), 0.0);
  EXPECT_GT(MeasureMemoryBandwidthGbps({0, 0, 0}), 0.0);
}

}  // namespace
}  // namespace h2o
