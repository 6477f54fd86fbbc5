#include "core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

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

}  // namespace
}  // namespace h2o
