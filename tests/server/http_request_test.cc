// RequestReader without sockets: requests as bytes in any split, pipelined
// requests, chunked bodies, 100-continue, and each limit's refusal with the
// memory held bounded by the limits whatever is fed.
#include "server/http_request.h"

#include <gtest/gtest.h>

#include <string>

namespace h2o::server {
namespace {

HttpLimits Small() {
  HttpLimits l;
  l.max_header_bytes = 2048;
  l.max_request_line = 1024;
  l.max_header_count = 10;
  l.max_body_bytes = 4096;
  return l;
}

// Feeds `bytes` in pieces of `step` (0: all at once).
void FeedAll(RequestReader& r, const std::string& bytes, size_t step = 0) {
  if (step == 0) step = bytes.size();
  for (size_t at = 0; at < bytes.size() && !r.complete() && !r.refusal(); at += step) {
    r.Feed(std::string_view(bytes).substr(at, step));
  }
}

TEST(HttpRequest, ParsesARequestInAnySplit) {
  const std::string bytes =
      "POST /v1/kv/abc?layer=2&x=a%20b+c HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer k\r\n"
      "Content-Length: 11\r\n\r\nhello world";
  for (const size_t step : {size_t{0}, size_t{1}, size_t{3}, size_t{17}}) {
    SCOPED_TRACE(step);
    RequestReader r(Small());
    FeedAll(r, bytes, step);
    ASSERT_TRUE(r.complete());
    const HttpRequest req = r.TakeRequest();
    EXPECT_EQ(req.method, "POST");
    EXPECT_EQ(req.path, "/v1/kv/abc");
    EXPECT_EQ(req.QueryParam("layer"), "2");
    EXPECT_EQ(req.QueryParam("x"), "a b c");
    EXPECT_EQ(req.QueryParam("missing"), std::nullopt);
    EXPECT_EQ(req.Header("authorization"), "Bearer k");
    EXPECT_EQ(req.body, "hello world");
    EXPECT_TRUE(req.keep_alive);
    EXPECT_FALSE(r.started());  // nothing of a next request yet
  }
}

TEST(HttpRequest, KeepAliveFollowsTheVersionAndConnectionHeader) {
  RequestReader r(Small());
  FeedAll(r, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_FALSE(r.TakeRequest().keep_alive);
  FeedAll(r, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_FALSE(r.TakeRequest().keep_alive);
}

TEST(HttpRequest, PipelinedRequestsComeOneAtATime) {
  RequestReader r(Small());
  FeedAll(r,
          "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\n");
  ASSERT_TRUE(r.complete());
  EXPECT_EQ(r.TakeRequest().path, "/a");
  ASSERT_TRUE(r.complete());
  const HttpRequest b = r.TakeRequest();
  EXPECT_EQ(b.path, "/b");
  EXPECT_EQ(b.body, "hi");
  EXPECT_FALSE(r.complete());
  EXPECT_TRUE(r.started());  // "/c" has begun
  r.Feed("\r\n");
  ASSERT_TRUE(r.complete());
  EXPECT_EQ(r.TakeRequest().path, "/c");
}

TEST(HttpRequest, ChunkedBodiesAreJoined) {
  for (const size_t step : {size_t{0}, size_t{1}, size_t{5}}) {
    RequestReader r(Small());
    FeedAll(r,
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n",
            step);
    ASSERT_TRUE(r.complete()) << step;
    EXPECT_EQ(r.TakeRequest().body, "hello world");
    // The shortest endings, byte by byte too: a one-byte chunk, no trailer
    // (the reader waits for the 5 bytes of a last chunk before feeding
    // Beast again, and these never have fewer left).
    RequestReader shortest(Small());
    FeedAll(shortest, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
            step);
    ASSERT_TRUE(shortest.complete()) << step;
    EXPECT_EQ(shortest.TakeRequest().body, "x");
  }
}

TEST(HttpRequest, ExpectContinueIsAskedOnceBeforeTheBody) {
  RequestReader r(Small());
  r.Feed("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
  EXPECT_TRUE(r.head_done());
  EXPECT_TRUE(r.wants_continue());
  r.MarkContinueSent();
  EXPECT_FALSE(r.wants_continue());
  r.Feed("abc");
  ASSERT_TRUE(r.complete());
  EXPECT_EQ(r.TakeRequest().body, "abc");
}

struct Refused {
  std::string name;
  std::string bytes;
  int status;
  std::string says;
};

TEST(HttpRequest, EachLimitIsRefusedWithItsStatus) {
  const std::string many_fields = [] {
    std::string s = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 11; ++i) s += "X-" + std::to_string(i) + ": v\r\n";
    return s + "\r\n";
  }();
  const std::vector<Refused> cases = {
      {"request line", "GET /" + std::string(1100, 'a'), 414, "request line over 1024 bytes"},
      {"target", "GET /" + std::string(1100, 'a') + " HTTP/1.1\r\n\r\n", 414, "1024 bytes"},
      {"head", "GET / HTTP/1.1\r\nX: " + std::string(3000, 'h'), 431,
       "request head over 2048 bytes (--max-header-size)"},
      {"fields", many_fields, 431, "more than 10 header fields (--max-headers)"},
      {"content-length", "POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413,
       "request body over 4096 bytes (--max-body)"},
      {"chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n" +
                      std::string(0x1000, 'x') + "\r\n1\r\ny\r\n",
       413, "request body over 4096 bytes (--max-body)"},
      {"gzip", "POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\nxx", 415,
       "Content-Encoding 'gzip'"},
      {"garbage", "\x01\x02 / HTTP/1.1\r\n\r\n", 400, "malformed HTTP request"},
      {"bad length", "POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400, "malformed"},
      {"chunk line", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;" +
                         std::string(20000, 'e'),
       400, "chunk header"},
  };
  for (const Refused& c : cases) {
    SCOPED_TRACE(c.name);
    RequestReader r(Small());
    FeedAll(r, c.bytes);
    ASSERT_TRUE(r.refusal().has_value());
    EXPECT_EQ(r.refusal()->status, c.status);
    EXPECT_NE(r.refusal()->message.find(c.says), std::string::npos) << r.refusal()->message;
    EXPECT_FALSE(r.complete());
    EXPECT_TRUE(r.ReadSpace().empty());  // nothing more is read
  }
}

// However much is offered, the reader takes no more than its buffer and
// the body limit: the memory a connection holds is bounded by the limits.
TEST(HttpRequest, MemoryStaysWithinTheLimitsWhateverIsFed) {
  const HttpLimits limits = Small();
  const size_t bound = 2 * (16 * 1024 + limits.max_header_bytes + limits.max_body_bytes);
  const std::vector<std::string> floods = {
      "GET / HTTP/1.1\r\n" + std::string(10 << 20, 'h'),
      "POST / HTTP/1.1\r\nContent-Length: 4000\r\n\r\n" + std::string(10 << 20, 'b'),
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + [] {
        std::string s;
        while (s.size() < (10u << 20)) s += "10\r\n0123456789abcdef\r\n";
        return s;
      }(),
  };
  for (const std::string& flood : floods) {
    RequestReader r(limits);
    const size_t taken = r.Feed(flood);
    EXPECT_LT(taken, size_t{1} << 20);
    EXPECT_LE(r.held_bytes(), bound);
  }
}

TEST(HttpRequest, PercentDecoding) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc+d"), "a b/c d");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

}  // namespace
}  // namespace h2o::server
