// What h2o serve prints, on a real process: the start-up banner, one line
// per finished request with its figures, --verbose's request lines,
// --log-format json (every line one object), -q, and a busy port's reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.h"
#include "server/serve_process.h"
#include "test_data.h"

namespace h2o::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// "Once upon a time" is 5 tokens with BOS; 6 greedy tokens, the budget 20%
// of the context (the bundled model's 512): h2o:heavy=51,recent=51.
const std::string kCompletion =
    R"({"prompt": "Once upon a time", "max_tokens": 6, "temperature": 0, "ignore_eos": true})";

TEST(ServeLog, BannerAndALinePerRequest) {
  ServeProcess s({"--kv", "h2o", "--kv-mem", "64MiB", "--chat-template", "chatml"});
  const std::string banner = s.Log();
  EXPECT_TRUE(Has(banner, "h2o serve: h2o.cpp ")) << banner;
  EXPECT_TRUE(Has(banner, " kernels, ")) << banner;
  EXPECT_TRUE(Has(banner, "h2o serve: model " + ModelPath() + ": llama, 5 layers")) << banner;
  EXPECT_TRUE(Has(banner, "context 512 tokens a sequence (trained 512); KV h2o "
                          "(h2o:heavy=51,recent=51 at 512), f16"))
      << banner;
  EXPECT_TRUE(Has(banner, "KV memory 64.00 MiB (--kv-mem)")) << banner;
  EXPECT_TRUE(Has(banner, "chat template chatml")) << banner;
  EXPECT_EQ(Exchange(s.port(), PostRequest("/v1/completions", kCompletion)).status, 200);
  ASSERT_TRUE(s.WaitForLog("finish length", seconds(10))) << s.Log();
  const std::string log = s.Log();
  EXPECT_TRUE(Has(log, "h2o serve: 200 /v1/completions cmpl-")) << log;
  EXPECT_TRUE(Has(log, ": prompt 5 tokens (0 reused), generated 6, first token ")) << log;
  EXPECT_TRUE(Has(log, "(h2o:heavy=51,recent=51), 0 evicted, finish length")) << log;
  // Without --verbose, no line for a request as it arrives.
  EXPECT_FALSE(Has(log, "POST /v1/completions (")) << log;
}

TEST(ServeLog, JsonLinesAndVerbose) {
  ServeProcess s({"--log-format", "json", "--verbose"});
  EXPECT_EQ(Exchange(s.port(), PostRequest("/v1/completions", kCompletion)).status, 200);
  ASSERT_TRUE(s.WaitForLog("\"event\":\"request\"", seconds(10))) << s.Log();
  bool request = false, arrival = false, parameters = false;
  for (const std::string& line : Lines(s.Log())) {
    const json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    ASSERT_TRUE(j.contains("time") && j.contains("level") && j.contains("msg")) << line;
    const std::string msg = j["msg"];
    arrival = arrival || Has(msg, "POST /v1/completions (");
    parameters = parameters || Has(msg, "5 prompt tokens, max_tokens 6, kv full");
    if (j.value("event", "") != "request") continue;
    request = true;
    EXPECT_EQ(j["status"], 200);
    EXPECT_EQ(j["endpoint"], "/v1/completions");
    EXPECT_EQ(j["prompt_tokens"], 5);
    EXPECT_EQ(j["completion_tokens"], 6);
    EXPECT_EQ(j["cached_tokens"], 0);
    EXPECT_EQ(j["finish_reason"], "length");
    EXPECT_EQ(j["kv"], "full");
    EXPECT_GT(j["kv_bytes"].get<double>(), 0);
    EXPECT_GE(j["total_ms"].get<double>(), j["ttft_ms"].get<double>());
  }
  EXPECT_TRUE(request && arrival && parameters) << s.Log();
}

TEST(ServeLog, QuietKeepsOnlyTheListeningLine) {
  ServeProcess s({"-q"});
  EXPECT_EQ(Exchange(s.port(), PostRequest("/v1/completions", kCompletion)).status, 200);
  EXPECT_EQ(Exchange(s.port(), PostRequest("/v1/completions", "{")).status, 400);
  ASSERT_TRUE(s.WaitForLog(": 400 POST /v1/completions", seconds(10))) << s.Log();
  const std::vector<std::string> lines = Lines(s.Log());
  ASSERT_EQ(lines.size(), 2u) << s.Log();
  EXPECT_TRUE(Has(lines[0], "h2o serve: listening on http://127.0.0.1:")) << lines[0];
}

TEST(ServeLog, ABusyPortSaysWhyAndWhatToDo) {
  ServeProcess s({});
  const RunResult r = RunH2o("serve -m " + ModelPath() + " --port " + std::to_string(s.port()));
  ExpectOneErrorLine(r, "cannot listen on 127.0.0.1:" + std::to_string(s.port()) +
                            ": Address already in use (another server has port " +
                            std::to_string(s.port()) + ": stop it, or choose another port with "
                            "--port, 0 for any free one)");
}

}  // namespace
}  // namespace h2o::testing
