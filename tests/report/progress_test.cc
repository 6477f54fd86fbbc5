// Progress line text (a pure function) and the bar's drawing rules, with
// stderr captured instead of a terminal.
#include "report/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

namespace h2o {
namespace {

TEST(FormatProgressLine, KnownTotal) {
  // 12 of 32 in 4 s: 3.0/s, 20 left -> 6.67 s -> "0:07"; 12*24/32 = 9 of 24
  // bar cells; 12*100/32 = 37.5 -> 37%.
  EXPECT_EQ(FormatProgressLine("cloze", 12, 32, 4.0),
            "cloze [#########---------------]  12/32  37%  3.0/s  ETA 0:07");
  // 200 of 1000 in 8 s = 25/s, 800 left -> 32 s.
  EXPECT_EQ(FormatProgressLine("ppl", 200, 1000, 8.0),
            "ppl [####--------------------]  200/1000  20%  25.0/s  ETA 0:32");
}

TEST(FormatProgressLine, RatesAndLongTimes) {
  // 1 of 10000 in 10 s: 0.10/s, 9999 left -> 99990 s = 27:46:30.
  EXPECT_EQ(FormatProgressLine("x", 1, 10000, 10.0),
            "x [------------------------]  1/10000  0%  0.10/s  ETA 27:46:30");
  // 5000 of 10000 in 10 s: 500/s, ETA 10 s.
  EXPECT_EQ(FormatProgressLine("x", 5000, 10000, 10.0),
            "x [############------------]  5000/10000  50%  500/s  ETA 0:10");
}

TEST(FormatProgressLine, StartAndEnd) {
  EXPECT_EQ(FormatProgressLine("x", 0, 4, 0.0),
            "x [------------------------]  0/4  0%  --/s  ETA --:--");
  // Done: 4 in 125 s = 0.032/s -> "0.03/s", and the time taken instead of an ETA.
  EXPECT_EQ(FormatProgressLine("x", 4, 4, 125.0),
            "x [########################]  4/4  100%  0.03/s  done in 2:05");
  // Overshooting the total does not draw past the bar.
  EXPECT_EQ(FormatProgressLine("x", 5, 4, 1.0),
            "x [########################]  5/4  100%  5.0/s  done in 0:01");
}

TEST(FormatProgressLine, UnknownTotal) {
  EXPECT_EQ(FormatProgressLine("tokens", 1500, 0, 3.0), "tokens 1500  500/s  0:03");
  EXPECT_EQ(FormatProgressLine("tokens", 0, -1, 0.0), "tokens 0  --/s  0:00");
  EXPECT_EQ(FormatProgressLine("tokens", 1, 0, std::numeric_limits<double>::quiet_NaN()),
            "tokens 1  --/s  --:--");
}

TEST(ProgressBar, DisabledPrintsNothing) {
  testing::internal::CaptureStderr();
  {
    ProgressBar bar("x", 10, false);
    for (int i = 0; i < 10; ++i) bar.Advance();
    bar.Finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(ProgressBar, QuietIsNeverEnabled) { EXPECT_FALSE(ProgressBar::Enabled(true)); }

TEST(ProgressBar, RedrawsAreThrottledAndFinishEndsTheLine) {
  testing::internal::CaptureStderr();
  {
    ProgressBar bar("items", 100000, true);
    for (int i = 0; i < 100000; ++i) bar.Advance();
    bar.Finish();
    bar.Finish();  // a second Finish, and the destructor, add nothing
  }
  const std::string out = testing::internal::GetCapturedStderr();
  // The loop takes milliseconds, so at most a handful of 200 ms redraws
  // besides the first and the final one (100000 if unthrottled).
  const auto redraws = std::count(out.begin(), out.end(), '\r');
  EXPECT_GE(redraws, 2);
  EXPECT_LE(redraws, 10);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.front(), '\r');
  EXPECT_EQ(out.back(), '\n');
  const std::string last = out.substr(out.rfind('\r') + 1);
  EXPECT_EQ(last.rfind("items [########################]  100000/100000  100%", 0), 0u) << last;
}

TEST(ProgressBar, DestructorEndsAnUnfinishedLine) {
  testing::internal::CaptureStderr();
  {
    ProgressBar bar("x", 10, true);
    bar.Advance(3);
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.back(), '\n');
  EXPECT_NE(out.find("3/10  30%"), std::string::npos) << out;
}

}  // namespace
}  // namespace h2o
