#include "core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "core/resident_memory.h"

namespace h2o {
namespace {

TEST(HugePageBuffer, ZeroedAndOnAHugePageBoundary) {
  for (size_t bytes :
       {size_t{1}, size_t{4096}, HugePageBuffer::kHugePageBytes + 1, size_t{5} << 20}) {
    auto b = HugePageBuffer::Allocate(bytes);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(b->size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % HugePageBuffer::kHugePageBytes, 0u);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; i += 512) nonzero += b->data()[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    // All of it is writable.
    b->data()[0] = 1;
    b->data()[bytes - 1] = 2;
    EXPECT_EQ(b->data()[bytes - 1], 2);
  }
}

TEST(HugePageBuffer, MovesOwnership) {
  auto a = HugePageBuffer::Allocate(size_t{3} << 20);
  ASSERT_TRUE(a.ok());
  uint8_t* data = a->data();
  data[100] = 7;
  HugePageBuffer b = std::move(a).value();
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.data()[100], 7);
  HugePageBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.size(), 0u);
}

// Rss and AnonHugePages (bytes) of the mapping of this process that holds
// `address`, from /proc/self/smaps; {-1, -1} where there is none to read.
std::pair<int64_t, int64_t> ResidentOfMapping(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  int64_t rss = -1, huge = -1;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream fields(line);
    if (fields >> std::hex >> begin >> dash >> end && dash == '-') {
      if (inside) break;
      inside = begin <= at && at < end;
      continue;
    }
    if (!inside) continue;
    std::string key;
    int64_t kib = 0;
    std::istringstream(line) >> key >> kib;
    if (key == "Rss:") rss = kib * 1024;
    if (key == "AnonHugePages:") huge = kib * 1024;
  }
  return {rss, huge};
}

TEST(HugePageBuffer, AdvisedLaterHoldsNoMoreThanItsBytes) {
  // Two whole huge pages and half of a third: populated, the half must stay
  // in small pages (a huge page there would hold a MiB past the buffer).
  const size_t bytes = HugePageBuffer::kHugePageBytes * 5 / 2;
  auto b = HugePageBuffer::Allocate(bytes, /*advise=*/false);
  ASSERT_TRUE(b.ok()) << b.status().message();
  b->AdviseWholePages();
  PopulateForWrite(b->data(), b->size());
  const auto [rss, huge] = ResidentOfMapping(b->data());
  if (rss < 0) GTEST_SKIP() << "no /proc/self/smaps";
  EXPECT_LE(rss, static_cast<int64_t>(bytes));
  EXPECT_LE(huge, static_cast<int64_t>(2 * HugePageBuffer::kHugePageBytes));
}

}  // namespace
}  // namespace h2o
