// What h2o serve accepts from a connection before a request costs memory
// or a worker: every input is bounded here, whatever its encoding. The
// defaults and the attack each limit answers are in RELIABILITY.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace h2o::server {

struct HttpLimits {
  // The request line and every header line together (431 beyond; 414 when
  // the request line alone passes max_request_line).
  size_t max_header_bytes = 16 * 1024;
  size_t max_request_line = 8 * 1024;
  int32_t max_header_count = 100;  // header fields (431 beyond)
  // The body as it arrives, Content-Length or chunked alike (413 beyond).
  // Compressed bodies (Content-Encoding other than identity) are refused
  // (415): nothing is inflated.
  size_t max_body_bytes = size_t{1} << 20;
  // Open connections; at the cap a new one closes the longest-idle
  // connection first, then the oldest one still sending its request, and
  // is refused (503) only when every connection has a request running.
  int32_t max_connections = 512;
  // From accepting a connection (or the end of its previous response) to
  // the last byte of the request head: a deadline, not a per-byte timeout,
  // so a client that trickles bytes is closed (408) all the same.
  std::chrono::milliseconds header_timeout{10'000};
  // An idle keep-alive connection (no byte of a next request) is closed
  // after this; within header_timeout.
  std::chrono::milliseconds idle_timeout{5'000};
  // From the end of the head to the last byte of the body (408 beyond).
  std::chrono::milliseconds body_timeout{60'000};
  // A response that makes no progress for this long (a client that does
  // not read) closes the connection and cancels its request.
  std::chrono::milliseconds send_timeout{60'000};
  // Response bytes waiting for a client that reads slower than tokens come
  // (beyond: closed, request cancelled).
  size_t max_pending_output = size_t{8} << 20;
};

}  // namespace h2o::server
