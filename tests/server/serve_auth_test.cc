// What h2o serve exposes to whom, on a real process: several API keys (from
// --api-key lists and --api-key-file), /metrics behind --metrics-key, and
// the endpoints left open (/health, the playground).
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/serve_process.h"

namespace h2o::testing {
namespace {

std::string Get(const std::string& path, const std::string& key = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" +
         (key.empty() ? std::string() : "Authorization: Bearer " + key + "\r\n") + "\r\n";
}

std::string Completion(const std::string& key) {
  return PostRequest("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})",
                     "Authorization: Bearer " + key + "\r\n");
}

TEST(ServeAuth, KeysFromListsAndAFileAndTheMetricsKey) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("h2o_keys_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << "# team keys\nfile-key-1\n\n  file-key-2  \n";
  ServeProcess s({"--api-key", "k1,k2", "--api-key", "k3", "--api-key-file", file.string(),
                  "--metrics-key", "scrape"});
  std::filesystem::remove(file);
  for (const std::string key : {"k1", "k2", "k3", "file-key-1", "file-key-2"}) {
    EXPECT_EQ(Exchange(s.port(), Completion(key)).status, 200) << key;
  }
  for (const std::string key : {"k", "k1,k2", "# team keys", "scrape"}) {
    EXPECT_EQ(Exchange(s.port(), Completion(key)).status, 401) << key;
  }
  EXPECT_EQ(Exchange(s.port(), Get("/metrics")).status, 401);
  EXPECT_EQ(Exchange(s.port(), Get("/metrics", "k1")).status, 401);  // API keys do not open it
  const RawResponse metrics = Exchange(s.port(), Get("/metrics", "scrape"));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(MetricValue(metrics.body, "h2o_requests_total"), 5);
  EXPECT_EQ(Exchange(s.port(), Get("/health")).status, 200);
  EXPECT_EQ(Exchange(s.port(), Get("/")).status, 200);
  EXPECT_EQ(Exchange(s.port(), Get("/v1/models")).status, 401);
  EXPECT_EQ(Exchange(s.port(), Get("/v1/models", "file-key-2")).status, 200);
}

// HEAD is GET without the body: the same status and length, and the next
// response on the connection right after the head.
TEST(ServeAuth, HeadAnswersWithTheHeadOnly) {
  ServeProcess s({});
  const RawResponse whole = Exchange(s.port(), Get("/playground.js"));
  ASSERT_EQ(whole.status, 200);
  const int fd = ConnectTo(s.port());
  SendAll(fd, "HEAD /playground.js HTTP/1.1\r\nHost: x\r\n\r\n" + Get("/health"));
  std::string received;
  const std::string health = R"({"status":"ok"})";
  char buf[4096];
  while (received.find(health) == std::string::npos) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    received.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const size_t head_end = received.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << received;
  const std::string head = received.substr(0, head_end);
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Length: " + std::to_string(whole.body.size())), std::string::npos)
      << head;
  EXPECT_EQ(received.find("HTTP/1.1 200 OK", head_end), head_end + 4);  // no body between
  EXPECT_NE(received.find(health), std::string::npos);
}

}  // namespace
}  // namespace h2o::testing
