#include "tokenizer/piece_table.h"

#include <gtest/gtest.h>

#include <string>

namespace h2o {
namespace {

TEST(PieceTableTest, FindsWhatWasInserted) {
  PieceTable t;
  t.Insert("a", 3, false);
  t.Insert("ab", 7, false);
  t.Insert("", 9, false);
  t.Insert(std::string("x\0y", 3), 11, false);
  EXPECT_EQ(t.Find("a"), 3);
  EXPECT_EQ(t.Find("ab"), 7);
  EXPECT_EQ(t.Find(""), 9);
  EXPECT_EQ(t.Find(std::string("x\0y", 3)), 11);
  EXPECT_EQ(t.Find("x"), -1);
  EXPECT_EQ(t.Find("abc"), -1);
  EXPECT_EQ(t.size(), 4u);
}

TEST(PieceTableTest, ReplaceDecidesWhichIdADuplicateKeeps) {
  PieceTable t;
  t.Insert("k", 1, /*replace=*/false);
  t.Insert("k", 2, /*replace=*/false);
  EXPECT_EQ(t.Find("k"), 1);
  t.Insert("k", 3, /*replace=*/true);
  EXPECT_EQ(t.Find("k"), 3);
  EXPECT_EQ(t.size(), 1u);
}

TEST(PieceTableTest, GrowsPastItsInitialSize) {
  PieceTable t(4);
  for (int i = 0; i < 5000; ++i) t.Insert("piece" + std::to_string(i), i, false);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(t.Find("piece" + std::to_string(i)), i);
  EXPECT_EQ(t.Find("piece5000"), -1);
}

}  // namespace
}  // namespace h2o
