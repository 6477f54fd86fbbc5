// The HTTP/1.1 connections of h2o serve, on one I/O thread (Boost.Asio):
// connections waiting for or sending a request cost a few hundred bytes
// and no thread, so clients that trickle bytes cannot hold the workers
// that run requests. A complete request goes to the handler on a small
// pool of threads; its response (whole, or streamed in chunks) comes back
// through an HttpExchange from any thread.
//
// What each connection may cost is bounded by HttpLimits (http_limits.h):
// the head and body as they arrive, the deadlines of each phase, the
// connections open at once, the response bytes a client has not read.
// While a request runs the connection is still read, so a client that
// closes or resets it is seen at once (HttpExchange::OnClose), whether or
// not anything is being written to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "server/http_limits.h"
#include "server/http_request.h"

namespace h2o::server {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// One request's response. Every method may be called from any thread; the
// bytes go out in the order of the calls made by one thread.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  // The whole response (Content-Length), then the connection takes its
  // next request (or closes, when the request asked to).
  virtual void Reply(int status, std::string_view content_type, std::string body,
                     const HttpHeaders& headers = {}) = 0;
  // A streamed response (chunked): the head goes out now, each Write as a
  // chunk, End finishes it. Writes made before BeginStream wait for it.
  virtual void BeginStream(int status, std::string_view content_type,
                           const HttpHeaders& headers = {}) = 0;
  virtual void Write(std::string_view data) = 0;
  virtual void End() = 0;
  // `on_close` runs once, on the I/O thread, if the connection ends before
  // the response did: the client closed or reset it, stopped reading for
  // the send timeout, or let max_pending_output pile up. If that already
  // happened it runs now, on the caller's thread.
  virtual void OnClose(std::function<void()> on_close) = 0;
};

using HttpHandler =
    std::function<void(HttpRequest request, std::shared_ptr<HttpExchange> exchange)>;

struct HttpServerOptions {
  HttpLimits limits;
  int32_t handler_threads = 2;  // run handlers (JSON, tokenizing); none blocks on a response
  // A refusal's body (the server's error format), e.g. for a 431.
  std::function<std::string(int status, const std::string& message)> error_body;
  // A line for the server log: each refusal and forced close, naming its
  // limit. Called on the I/O thread: it must be cheap and bounded (a
  // LogLimiter).
  std::function<void(const std::string& line)> log;
};

// Counters for /metrics (totals since start).
struct HttpStats {
  int64_t connections_open = 0;
  int64_t connections_accepted = 0;
  int64_t connections_closed_at_cap = 0;  // idle or slow ones closed for a new one
  int64_t connections_refused = 0;        // at the cap with every connection busy (503)
  int64_t refused_400 = 0, refused_408 = 0, refused_413 = 0, refused_414 = 0, refused_415 = 0,
          refused_431 = 0;
  int64_t responses_abandoned = 0;  // the client left (or stopped reading) mid-response
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port (`port` 0: any free one). Raises
  // the open-files limit toward max_connections, or lowers the cap to fit
  // it (logged).
  Result<int> Listen(const std::string& host, int port);
  // Serves until Stop(), then until every request already handed to the
  // handler has been answered.
  void Run();
  // Thread-safe: no more connections or requests; idle connections close.
  void Stop();
  HttpStats Stats() const;

  struct Core;  // the I/O context, the connections, the handler threads

 private:
  std::unique_ptr<Core> core_;
};

}  // namespace h2o::server
