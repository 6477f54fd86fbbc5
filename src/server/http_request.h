// HTTP/1.1 requests read from a connection's bytes under HttpLimits, with
// no socket in sight: the connection (http_server.cc) reads into
// ReadSpace() and commits, the fuzzer and the tests feed bytes directly.
// The grammar is Boost.Beast's parser; the limits, the buffer and what is
// kept of a request are ours, so memory is bounded by the limits whatever
// the client sends: the buffer never grows past max_header_bytes (plus one
// read), the body past max_body_bytes, the fields past max_header_count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http_limits.h"

namespace h2o::server {

struct HttpRequest {
  std::string method;  // as sent ("GET", "POST", ...)
  std::string path;    // the target up to '?'
  std::string query;   // after '?' (raw), or empty
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;                                           // de-chunked
  bool keep_alive = true;                                     // HTTP/1.1 unless "close"
  std::string peer;                                           // "address:port", for logs

  // The first field named `name` (case-insensitive), or empty.
  std::string_view Header(std::string_view name) const;
  // The value of query parameter `key`, percent-decoded; nullopt if absent.
  std::optional<std::string> QueryParam(std::string_view key) const;
};

// Why a request is answered with an error before any handler sees it.
struct HttpRefusal {
  int status = 400;     // 400, 408, 413, 414, 415, 431
  std::string message;  // names the limit, e.g. "... over 16384 bytes (--max-header-size)"
};

class RequestReader {
 public:
  explicit RequestReader(const HttpLimits& limits);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Room for the next read: empty when the reader takes no more bytes now
  // (a request is complete or refused, or pipelined bytes fill the buffer).
  std::span<char> ReadSpace();
  // `n` bytes were read into ReadSpace(); parses what it can.
  void Commit(size_t n);
  // Copies `bytes` in through ReadSpace/Commit; returns how many it took.
  size_t Feed(std::string_view bytes);

  // Whether ReadSpace() would give room now.
  bool wants_bytes() const;
  bool started() const;  // a byte of the current request has arrived
  bool head_done() const;
  // The head asked "Expect: 100-continue" and the body has not begun.
  bool wants_continue() const;
  void MarkContinueSent();  // "HTTP/1.1 100 Continue" went out
  bool complete() const;  // the whole request is here: TakeRequest()
  const std::optional<HttpRefusal>& refusal() const { return refusal_; }

  // The complete request; the reader then parses bytes already buffered
  // (a pipelined next request).
  HttpRequest TakeRequest();
  // Bytes held (buffer, body so far): what a connection costs now.
  size_t held_bytes() const;
  // Gives back the buffer's memory when nothing is buffered (idle).
  void ReleaseIdleMemory();

 private:
  class Parser;
  size_t BufferCap() const;
  void StartRequest();
  void Parse();
  void Refuse(int status, std::string message);

  const HttpLimits limits_;
  std::unique_ptr<Parser> parser_;
  std::string buffer_;  // [begin_, size): received, not yet parsed
  size_t begin_ = 0;
  size_t read_at_ = 0;  // where ReadSpace()'s room starts
  std::optional<HttpRefusal> refusal_;
  bool continue_sent_ = false;
};

// The limit flags' names, for refusal messages and logs.
inline constexpr const char* kMaxHeaderSizeFlag = "--max-header-size";
inline constexpr const char* kMaxHeadersFlag = "--max-headers";
inline constexpr const char* kMaxBodyFlag = "--max-body";

// "%41b" -> "Ab", '+' -> ' '; malformed escapes are kept as they are.
std::string PercentDecode(std::string_view text);

}  // namespace h2o::server
