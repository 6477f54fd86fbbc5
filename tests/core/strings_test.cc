#include "core/strings.h"

#include <gtest/gtest.h>

namespace h2o {
namespace {

TEST(Trim, DropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(Trim("  a b\t"), "a b");
  EXPECT_EQ(Trim("a"), "a");
  EXPECT_EQ(Trim(" \t "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("\na\n"), "\na\n");  // newlines are not blanks by default
  EXPECT_EQ(Trim("\r\n a \n", " \t\r\n"), "a");
}

}  // namespace
}  // namespace h2o
