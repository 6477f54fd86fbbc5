// The server log under a flood: a bounded number of lines a second, the
// rest counted, and what clients sent shown without control characters.
#include "server/log_limiter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace h2o::server {
namespace {

TEST(LogLimiter, AFloodIsCountedNotLogged) {
  std::vector<std::string> lines;
  LogLimiter log([&](const std::string& line) { lines.push_back(line); }, 10);
  for (int i = 0; i < 25; ++i) log.Line("refused " + std::to_string(i));
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[9], "refused 9");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  log.Line("later");
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[10], "later (15 more lines before this one were not logged)");
}

TEST(LogLimiter, ClientBytesAreShownSafely) {
  std::vector<std::string> lines;
  LogLimiter log([&](const std::string& line) { lines.push_back(line); }, 10);
  log.Line("GET /\x1b[2Jcleared\r\nX-Fake: line");
  log.Line(std::string(1000, 'a'));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "GET /?[2Jcleared??X-Fake: line");
  EXPECT_EQ(lines[1], std::string(400, 'a') + "...");
  LogLimiter none(nullptr, 10);
  none.Line("nowhere");  // no sink: nothing happens
}

}  // namespace
}  // namespace h2o::server
