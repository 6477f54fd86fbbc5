#include "core/resident_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace h2o {
namespace {

// Which pages of [base, base + pages * page) the kernel has backed.
std::vector<bool> Resident(uint8_t* base, size_t pages, size_t page) {
  std::vector<unsigned char> in_core(pages);
  EXPECT_EQ(mincore(base, pages * page, in_core.data()), 0);
  std::vector<bool> resident(pages);
  for (size_t i = 0; i < pages; ++i) resident[i] = (in_core[i] & 1) != 0;
  return resident;
}

TEST(PopulateForWrite, BacksExactlyThePagesTheRangeTouches) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = 16;
  auto* base = static_cast<uint8_t*>(
      mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(base, MAP_FAILED);
  // Fresh anonymous memory has no page yet.
  for (bool r : Resident(base, pages, page)) ASSERT_FALSE(r);
  // Pages 3 to 9, starting and ending inside a page.
  PopulateForWrite(base + 3 * page + 100, 6 * page + 50);
  const std::vector<bool> resident = Resident(base, pages, page);
  for (size_t i = 0; i < pages; ++i) EXPECT_EQ(resident[i], i >= 3 && i <= 9) << "page " << i;
  munmap(base, pages * page);
}

TEST(PopulateForWrite, LeavesTheBytesAroundTheRange) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<uint8_t> buffer(8 * page, 0xA5);
  const size_t first = page / 2 + 7, bytes = 3 * page;
  PopulateForWrite(buffer.data() + first, bytes);
  for (size_t i = 0; i < buffer.size(); ++i) {
    if (i < first || i >= first + bytes) {
      ASSERT_EQ(buffer[i], 0xA5) << "byte " << i;
    }
  }
}

TEST(PopulateForWrite, NothingToDo) {
  PopulateForWrite(nullptr, 100);
  uint8_t byte = 7;
  PopulateForWrite(&byte, 0);
  EXPECT_EQ(byte, 7);
}

}  // namespace
}  // namespace h2o
