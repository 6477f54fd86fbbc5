#include "runtime/stop_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace h2o {
namespace {

// Feeds pieces; returns what was emitted piece by piece, then Finish().
std::vector<std::string> Feed(StopText& t, const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  for (const std::string& p : pieces) out.push_back(t.Add(p));
  out.push_back(t.Finish());
  return out;
}

TEST(StopText, NoStopsEmitsEverythingAtOnce) {
  StopText t({});
  EXPECT_EQ(Feed(t, {"Once", " upon", " a"}),
            (std::vector<std::string>{"Once", " upon", " a", ""}));
  EXPECT_FALSE(t.stopped());
}

TEST(StopText, CutsAtTheStopAndHoldsBackItsPossibleStart) {
  StopText t({"\n\n", "END"});
  // "E" could begin "END": held back until " x" shows it does not.
  EXPECT_EQ(Feed(t, {"a E", " x", "yz\n", "\nmore"}),
            (std::vector<std::string>{"a ", "E x", "yz", "", ""}));
  EXPECT_TRUE(t.stopped());
}

TEST(StopText, AStopSplitOverPiecesIsNeverShown) {
  StopText t({"END"});
  EXPECT_EQ(Feed(t, {"the E", "N", "D and on"}), (std::vector<std::string>{"the ", "", "", ""}));
  EXPECT_TRUE(t.stopped());
}

TEST(StopText, TheEarliestOfSeveralStopsWins) {
  StopText t({"cd", "b"});
  EXPECT_EQ(Feed(t, {"abcd"}), (std::vector<std::string>{"a", ""}));
}

TEST(StopText, HoldsBackAnUnfinishedUtf8Character) {
  StopText t({});
  // "é" is C3 A9, split over two pieces (byte tokens).
  EXPECT_EQ(Feed(t, {"caf\xC3", "\xA9!"}), (std::vector<std::string>{"caf", "\xC3\xA9!", ""}));
  StopText end({});
  EXPECT_EQ(Feed(end, {"x\xE2\x82"}), (std::vector<std::string>{"x", "\xE2\x82"}));
}

TEST(StopText, EmptyStopStringsAreIgnored) {
  StopText t({"", ""});
  EXPECT_EQ(Feed(t, {"ab"}), (std::vector<std::string>{"ab", ""}));
  EXPECT_FALSE(t.stopped());
}

}  // namespace
}  // namespace h2o
