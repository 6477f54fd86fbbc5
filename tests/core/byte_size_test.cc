#include "core/byte_size.h"

#include <gtest/gtest.h>

#include <string>

namespace h2o {
namespace {

TEST(ParseByteSize, UnitsAsDocumented) {
  EXPECT_EQ(ParseByteSize("1073741824").value(), 1073741824u);
  EXPECT_EQ(ParseByteSize("512B").value(), 512u);
  EXPECT_EQ(ParseByteSize("2GiB").value(), 2u << 30);
  EXPECT_EQ(ParseByteSize("2G").value(), 2u << 30);
  EXPECT_EQ(ParseByteSize("2gb").value(), 2000000000u);
  EXPECT_EQ(ParseByteSize("1.5MiB").value(), 1572864u);
  EXPECT_EQ(ParseByteSize(" 64 KiB ").value(), 65536u);
  EXPECT_EQ(ParseByteSize("3k").value(), 3072u);
  EXPECT_EQ(ParseByteSize("1TB").value(), 1000000000000u);
}

TEST(ParseByteSize, BadTextNamesIt) {
  for (const char* bad : {"", "GiB", "-1G", "2 parsecs", "1.2.3M", "0x10"}) {
    auto r = ParseByteSize(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(ParseByteSize("2 parsecs").status().message().find("'2 parsecs' has an unknown unit"),
            std::string::npos);
  EXPECT_FALSE(ParseByteSize("99999999999TB").ok());
}

}  // namespace
}  // namespace h2o
