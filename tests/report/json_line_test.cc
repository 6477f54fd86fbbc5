#include "report/json_line.h"

#include <gtest/gtest.h>

namespace h2o {
namespace {

TEST(JsonLine, APartialUtf8AnswerIsReplacedNotThrown) {
  // "7\xe2\x80" is a generation cut inside a three-byte character.
  const nlohmann::json j = {{"answer", std::string("7\xe2\x80")}};
  EXPECT_EQ(JsonLine(j), "{\"answer\":\"7\xef\xbf\xbd\"}\n");
  const nlohmann::ordered_json o = {{"b", 1}, {"a", "ok"}};
  EXPECT_EQ(JsonLine(o), "{\"b\":1,\"a\":\"ok\"}\n");
}

}  // namespace
}  // namespace h2o
