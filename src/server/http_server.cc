#include "server/http_server.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <exception>
#include <list>
#include <mutex>
#include <optional>

namespace h2o::server {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

// After a refusal the connection reads and drops what the client was still
// sending, for at most this long and this much, so that the client gets to
// read the answer instead of a reset.
constexpr std::chrono::milliseconds kLinger{2000};
constexpr size_t kLingerBytes = size_t{1} << 20;
// File descriptors kept for the model, logs and files beside connections.
constexpr rlim_t kSpareFiles = 64;

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

// A response head; `length` unset: a chunked body.
std::string ResponseHead(int status, std::string_view content_type, std::optional<size_t> length,
                         bool keep_alive, const HttpHeaders& headers) {
  std::string head = fmt::format("HTTP/1.1 {} {}\r\n", status, ReasonPhrase(status));
  if (!content_type.empty()) head += fmt::format("Content-Type: {}\r\n", content_type);
  head += length ? fmt::format("Content-Length: {}\r\n", *length)
                 : std::string("Transfer-Encoding: chunked\r\n");
  head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const auto& [name, value] : headers) head += fmt::format("{}: {}\r\n", name, value);
  head += "\r\n";
  return head;
}

void AppendChunk(std::string& out, std::string_view data) {
  if (data.empty()) return;  // an empty chunk would end the body
  out += fmt::format("{:x}\r\n", data.size());
  out += data;
  out += "\r\n";
}

}  // namespace

struct Connection;

struct HttpServer::Core {
  Core(HttpServerOptions o, HttpHandler h)
      : options(std::move(o)),
        handler(std::move(h)),
        pool(static_cast<size_t>(std::max(1, options.handler_threads))),
        max_connections(std::max(1, options.limits.max_connections)) {}

  HttpServerOptions options;
  HttpHandler handler;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_retry{io};
  asio::thread_pool pool;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{
      asio::make_work_guard(io)};
  int32_t max_connections;

  // I/O thread only. The connections are owned here (and by their pending
  // handlers): one waiting for nothing, e.g. between a pipelined request
  // and its response, still lives.
  std::list<std::shared_ptr<Connection>> connections;
  bool stopping = false;

  std::atomic<int64_t> open{0}, accepted{0}, closed_at_cap{0}, refused_at_cap{0}, abandoned{0};
  std::atomic<int64_t> refused[6] = {};  // 400 408 413 414 415 431

  void Log(std::string line) {
    if (options.log) options.log(line);
  }
  void CountRefusal(int status) {
    const int statuses[6] = {400, 408, 413, 414, 415, 431};
    for (int i = 0; i < 6; ++i) {
      if (statuses[i] == status) refused[i] += 1;
    }
  }
  std::string ErrorBody(int status, const std::string& message) const {
    return options.error_body ? options.error_body(status, message) : message + "\n";
  }

  void Accept();
  void Admit(tcp::socket socket);
  bool MakeRoom();
  void Remove(Connection* c);
  void StopOnIoThread();
};

class Exchange;

struct Connection : std::enable_shared_from_this<Connection> {
  enum class Phase { kIdle, kRequest, kHandling, kLingering, kClosed };

  Connection(HttpServer::Core& c, tcp::socket s)
      : core(&c),
        socket(std::move(s)),
        timer(core->io),
        reader(core->options.limits) {}

  void Start();
  void WaitReadable();
  void OnReadable(const error_code& ec);
  void Advance();
  void Dispatch();
  void Refuse(const HttpRefusal& refusal);
  void Flush();
  void Send(std::string bytes);
  void StartWrite();
  void OnWritten(const error_code& ec, size_t n);
  void ResponseDone();
  void ArmAt(Clock::time_point deadline);
  void Disarm();
  void OnDeadline();
  void Close(const std::string& why);

  HttpServer::Core* core;  // outlives its connections (it owns the I/O context)
  tcp::socket socket;
  asio::steady_timer timer;
  RequestReader reader;
  std::string peer;
  Phase phase = Phase::kIdle;
  Clock::time_point wait_start;  // when it began waiting for its current request
  bool body_deadline_set = false;
  bool waiting = false;  // an async_wait for readable is pending
  bool writing = false;
  std::string out;       // bytes to write next
  std::string inflight;  // bytes being written
  size_t written = 0;    // of inflight
  std::shared_ptr<Exchange> exchange;
  bool response_ended = false;  // the exchange's last bytes are in out/inflight
  bool close_after_response = false;
  size_t lingered = 0;
  uint64_t timer_epoch = 0;
  std::list<std::shared_ptr<Connection>>::iterator slot;
};

class Exchange final : public HttpExchange {
 public:
  Exchange(std::weak_ptr<Connection> connection, asio::io_context::executor_type io,
           bool head_only, bool keep_alive)
      : connection_(std::move(connection)), io_(io), head_only_(head_only), keep_alive_(keep_alive) {}

  void Reply(int status, std::string_view content_type, std::string body,
             const HttpHeaders& headers) override {
    std::function<void()> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    if (begun_ || abandoned_) return;
    begun_ = true;
    out_ += ResponseHead(status, content_type, body.size(), keep_alive_, headers);
    if (!head_only_) out_ += body;
    dropped = Ended();
    PostFlush();
  }

  void BeginStream(int status, std::string_view content_type,
                   const HttpHeaders& headers) override {
    std::function<void()> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    if (begun_ || abandoned_) return;
    begun_ = true;
    out_ += ResponseHead(status, content_type, std::nullopt, keep_alive_, headers);
    AppendChunk(out_, early_);
    std::string().swap(early_);
    if (end_early_) {
      out_ += "0\r\n\r\n";
      dropped = Ended();
    }
    PostFlush();
  }

  void Write(std::string_view data) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_ || abandoned_) return;
    if (!begun_) {
      early_ += data;
      return;
    }
    AppendChunk(out_, data);
    PostFlush();
  }

  void End() override {
    std::function<void()> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    if (!begun_) {
      end_early_ = true;
      return;
    }
    if (ended_ || abandoned_) return;
    out_ += "0\r\n\r\n";
    dropped = Ended();
    PostFlush();
  }

  void OnClose(std::function<void()> on_close) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (ended_) return;  // nothing left to abandon
    if (!abandoned_) {
      on_close_ = std::move(on_close);
      return;
    }
    lock.unlock();
    if (on_close) on_close();
  }

  // I/O thread: what to write now.
  struct Taken {
    std::string bytes;
    bool ended = false;
  };
  Taken Take() {
    std::lock_guard<std::mutex> lock(mu_);
    flush_posted_ = false;
    Taken t;
    t.bytes.swap(out_);
    t.ended = ended_;
    return t;
  }

  // I/O thread: the connection ended. Returns whether the response had not
  // (and runs on_close then).
  bool Abandon() {
    std::unique_lock<std::mutex> lock(mu_);
    if (abandoned_) return false;
    abandoned_ = true;
    const bool unfinished = !ended_;
    std::function<void()> on_close = std::move(on_close_);
    std::string().swap(out_);
    lock.unlock();
    if (unfinished && on_close) on_close();
    return unfinished;
  }

 private:
  // The response is complete: on_close will never run. It is handed back to
  // be destroyed after the lock (a `dropped` declared before the lock
  // guard): it may hold the last reference to what holds this exchange.
  std::function<void()> Ended() {
    ended_ = true;
    return std::move(on_close_);
  }

  void PostFlush() {
    if (flush_posted_) return;
    flush_posted_ = true;
    asio::post(io_, [weak = connection_] {
      if (auto c = weak.lock()) c->Flush();
    });
  }

  const std::weak_ptr<Connection> connection_;
  const asio::io_context::executor_type io_;
  const bool head_only_;
  const bool keep_alive_;
  std::mutex mu_;
  std::string out_;    // composed, not yet taken by the I/O thread
  std::string early_;  // Write()s before BeginStream()
  bool end_early_ = false;  // End() before BeginStream()
  bool begun_ = false;
  bool ended_ = false;
  bool abandoned_ = false;
  bool flush_posted_ = false;
  std::function<void()> on_close_;
};

// ---- Connection (I/O thread) ----

void Connection::Start() {
  error_code ec;
  socket.non_blocking(true, ec);
  socket.set_option(tcp::no_delay(true), ec);  // a streamed token goes out at once
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  peer = ec ? std::string("?") : fmt::format("{}:{}", remote.address().to_string(), remote.port());
  phase = Phase::kIdle;
  wait_start = Clock::now();
  ArmAt(wait_start + std::min(core->options.limits.idle_timeout,
                              core->options.limits.header_timeout));
  WaitReadable();
}

void Connection::WaitReadable() {
  if (waiting || phase == Phase::kClosed) return;
  if (phase != Phase::kLingering && !reader.wants_bytes()) return;
  waiting = true;
  socket.async_wait(tcp::socket::wait_read,
                    [self = shared_from_this()](const error_code& ec) {
                      self->waiting = false;
                      self->OnReadable(ec);
                    });
}

void Connection::OnReadable(const error_code& wait_error) {
  if (phase == Phase::kClosed || wait_error == asio::error::operation_aborted) return;
  if (wait_error) {
    Close("");
    return;
  }
  if (phase == Phase::kLingering) {
    static thread_local char sink[16 * 1024];
    error_code ec;
    const size_t n = socket.read_some(asio::buffer(sink), ec);
    lingered += n;
    if (ec == asio::error::would_block) {
      WaitReadable();
    } else if (ec || lingered > kLingerBytes) {
      Close("");
    } else {
      WaitReadable();
    }
    return;
  }
  for (;;) {
    const std::span<char> space = reader.ReadSpace();
    if (space.empty()) break;
    error_code ec;
    const size_t n = socket.read_some(asio::buffer(space.data(), space.size()), ec);
    reader.Commit(ec ? 0 : n);
    if (ec == asio::error::would_block) break;
    if (ec) {  // end of stream or reset: the client is gone
      Close("");
      return;
    }
    if (n < space.size()) break;
  }
  Advance();
}

void Connection::Advance() {
  if (phase == Phase::kClosed || phase == Phase::kLingering) return;
  if (phase == Phase::kHandling) {  // watch for the client leaving; keep what it pipelines
    WaitReadable();
    return;
  }
  if (const auto& refusal = reader.refusal()) {
    Refuse(*refusal);
    return;
  }
  if (reader.complete()) {
    Dispatch();
    return;
  }
  if (reader.started()) {
    const HttpLimits& limits = core->options.limits;
    if (phase == Phase::kIdle) {
      phase = Phase::kRequest;
      ArmAt(wait_start + limits.header_timeout);
    }
    if (reader.head_done() && !body_deadline_set) {
      body_deadline_set = true;
      ArmAt(Clock::now() + limits.body_timeout);
    }
    if (reader.wants_continue()) {
      reader.MarkContinueSent();
      Send("HTTP/1.1 100 Continue\r\n\r\n");
    }
  }
  WaitReadable();
}

void Connection::Dispatch() {
  HttpRequest request = reader.TakeRequest();
  request.peer = peer;
  phase = Phase::kHandling;
  body_deadline_set = false;
  Disarm();
  close_after_response = !request.keep_alive || core->stopping;
  exchange = std::make_shared<Exchange>(weak_from_this(), core->io.get_executor(),
                                        request.method == "HEAD", !close_after_response);
  asio::post(core->pool, [core = core, request = std::move(request),
                          ex = std::shared_ptr<HttpExchange>(exchange)]() mutable {
    try {
      core->handler(std::move(request), ex);
    } catch (const std::exception& e) {
      ex->Reply(500, "application/json", core->ErrorBody(500, e.what()));
    }
  });
  WaitReadable();
}

void Connection::Refuse(const HttpRefusal& refusal) {
  core->CountRefusal(refusal.status);
  core->Log(fmt::format("{}: {} {}", peer, refusal.status, refusal.message));
  phase = Phase::kLingering;
  ArmAt(Clock::now() + kLinger);
  const std::string body = core->ErrorBody(refusal.status, refusal.message);
  out += ResponseHead(refusal.status, "application/json", body.size(), false, {});
  out += body;
  StartWrite();
}

void Connection::Flush() {
  if (phase != Phase::kHandling || !exchange) return;
  Exchange::Taken taken = exchange->Take();
  out += taken.bytes;
  if (out.size() + (inflight.size() - written) > core->options.limits.max_pending_output) {
    Close(fmt::format("{}: closed: over {} response bytes waiting for a client that does not "
                      "read them",
                      peer, core->options.limits.max_pending_output));
    return;
  }
  response_ended = response_ended || taken.ended;
  StartWrite();
  if (response_ended && !writing && out.empty() && written == inflight.size()) ResponseDone();
}

void Connection::Send(std::string bytes) {
  out += bytes;
  StartWrite();
}

void Connection::StartWrite() {
  if (writing || phase == Phase::kClosed) return;
  if (written == inflight.size()) {
    if (out.empty()) return;
    inflight.swap(out);
    out.clear();
    written = 0;
  }
  writing = true;
  // Armed at each write, so the send timeout counts time without progress.
  if (phase == Phase::kHandling) ArmAt(Clock::now() + core->options.limits.send_timeout);
  socket.async_write_some(
      asio::buffer(inflight.data() + written, inflight.size() - written),
      [self = shared_from_this()](const error_code& ec, size_t n) { self->OnWritten(ec, n); });
}

void Connection::OnWritten(const error_code& ec, size_t n) {
  writing = false;
  written += n;
  if (written == inflight.size()) {
    if (inflight.capacity() > 64 * 1024) {
      std::string().swap(inflight);
    } else {
      inflight.clear();
    }
    written = 0;
  }
  if (phase == Phase::kClosed) return;
  if (ec) {
    Close("");
    return;
  }
  if (written < inflight.size() || !out.empty()) {
    StartWrite();
    return;
  }
  if (phase == Phase::kLingering) {
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    WaitReadable();
    return;
  }
  if (phase == Phase::kHandling) {
    Disarm();  // no deadline while the next tokens are computed
    if (response_ended) ResponseDone();
  }
}

void Connection::ResponseDone() {
  exchange.reset();
  response_ended = false;
  if (close_after_response || core->stopping) {
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    Close("");
    return;
  }
  phase = Phase::kIdle;
  wait_start = Clock::now();
  const HttpLimits& limits = core->options.limits;
  ArmAt(wait_start + std::min(limits.idle_timeout, limits.header_timeout));
  reader.ReleaseIdleMemory();
  Advance();
}

void Connection::ArmAt(Clock::time_point deadline) {
  const uint64_t epoch = ++timer_epoch;
  timer.expires_at(deadline);
  timer.async_wait([self = shared_from_this(), epoch](const error_code& ec) {
    if (ec || epoch != self->timer_epoch) return;
    self->OnDeadline();
  });
}

void Connection::Disarm() {
  ++timer_epoch;
  timer.cancel();
}

void Connection::OnDeadline() {
  const HttpLimits& limits = core->options.limits;
  auto seconds = [](std::chrono::milliseconds ms) { return ms.count() / 1000.0; };
  switch (phase) {
    case Phase::kIdle:
    case Phase::kLingering:
      Close("");
      return;
    case Phase::kRequest:
      Refuse(reader.head_done()
                 ? HttpRefusal{408, fmt::format("request body not complete within {:g} s of its "
                                                "head (--body-timeout)",
                                                seconds(limits.body_timeout))}
                 : HttpRefusal{408, fmt::format("request head not complete within {:g} s "
                                                "(--header-timeout)",
                                                seconds(limits.header_timeout))});
      return;
    case Phase::kHandling:
      Close(fmt::format("{}: closed: the client read nothing of its response for {:g} s "
                        "(--send-timeout)",
                        peer, seconds(limits.send_timeout)));
      return;
    case Phase::kClosed:
      return;
  }
}

void Connection::Close(const std::string& why) {
  if (phase == Phase::kClosed) return;
  const std::shared_ptr<Connection> keep = shared_from_this();  // Remove drops the list's
  if (!why.empty()) core->Log(why);
  phase = Phase::kClosed;
  if (exchange) {
    if (exchange->Abandon()) core->abandoned += 1;
    exchange.reset();
  }
  ++timer_epoch;
  timer.cancel();
  error_code ignored;
  socket.close(ignored);
  core->Remove(this);
}

// ---- Core (I/O thread) ----

void HttpServer::Core::Accept() {
  acceptor.async_accept(io, [self = this](const error_code& ec, tcp::socket s) {
    if (self->stopping || !self->acceptor.is_open()) return;
    if (ec) {
      // Out of file descriptors: wait for connections to close rather than spin.
      self->Log(fmt::format("accept failed: {}", ec.message()));
      self->accept_retry.expires_after(std::chrono::milliseconds(100));
      self->accept_retry.async_wait([self](const error_code& e) {
        if (!e) self->Accept();
      });
      return;
    }
    self->Admit(std::move(s));
    self->Accept();
  });
}

void HttpServer::Core::Admit(tcp::socket s) {
  if (static_cast<int32_t>(connections.size()) >= max_connections && !MakeRoom()) {
    refused_at_cap += 1;
    Log(fmt::format("503: {} connections open (--max-connections), each with a request running: "
                    "a new connection refused",
                    connections.size()));
    const std::string body =
        ErrorBody(503, fmt::format("the server has {} connections with requests running; retry "
                                   "later",
                                   connections.size()));
    const std::string response =
        ResponseHead(503, "application/json", body.size(), false, {{"Retry-After", "1"}}) + body;
    ::send(s.native_handle(), response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    error_code ignored;
    s.close(ignored);
    return;
  }
  auto c = std::make_shared<Connection>(*this, std::move(s));
  c->slot = connections.insert(connections.end(), c);
  open += 1;
  accepted += 1;
  c->Start();
}

// At the connection cap: closes the connection that costs the least to
// lose: one already closing, else the longest idle, else the one that has
// been sending its request the longest. False when every connection has a
// request running.
bool HttpServer::Core::MakeRoom() {
  using Phase = Connection::Phase;
  std::shared_ptr<Connection> victim;
  for (const Phase phase : {Phase::kLingering, Phase::kIdle, Phase::kRequest}) {
    for (const std::shared_ptr<Connection>& c : connections) {
      if (c->phase == phase && (victim == nullptr || c->wait_start < victim->wait_start)) {
        victim = c;
      }
    }
    if (victim != nullptr) break;
  }
  if (victim == nullptr) return false;
  closed_at_cap += 1;
  victim->Close(victim->phase == Phase::kRequest
                    ? fmt::format("{}: closed: {} connections open (--max-connections) and its "
                                  "request has been arriving the longest",
                                  victim->peer, connections.size())
                    : std::string());
  return true;
}

void HttpServer::Core::Remove(Connection* c) {
  connections.erase(c->slot);
  open -= 1;
  if (stopping && connections.empty()) work.reset();
}

void HttpServer::Core::StopOnIoThread() {
  if (stopping) return;
  stopping = true;
  error_code ignored;
  acceptor.close(ignored);
  accept_retry.cancel();
  std::vector<std::shared_ptr<Connection>> idle;
  for (const std::shared_ptr<Connection>& c : connections) {
    if (c->phase == Connection::Phase::kHandling) {
      c->close_after_response = true;
    } else {
      idle.push_back(c);
    }
  }
  for (const std::shared_ptr<Connection>& c : idle) c->Close("");
  if (connections.empty()) work.reset();
}

// ---- HttpServer ----

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : core_(std::make_unique<Core>(std::move(options), std::move(handler))) {}

// The handler threads end first; then the Core's I/O context destroys what
// is still queued on it (connections a Run never served).
HttpServer::~HttpServer() { core_->pool.join(); }

Result<int> HttpServer::Listen(const std::string& host, int port) {
  Core& c = *core_;
  // Every connection is a file descriptor: raise the soft limit toward the
  // cap, or lower the cap to what the hard limit allows.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    const rlim_t want = static_cast<rlim_t>(c.max_connections) + kSpareFiles;
    if (files.rlim_cur < want) {
      files.rlim_cur = std::min(want, files.rlim_max);
      setrlimit(RLIMIT_NOFILE, &files);
      getrlimit(RLIMIT_NOFILE, &files);
    }
    if (files.rlim_cur < want) {
      const int32_t fit = static_cast<int32_t>(
          std::max<rlim_t>(16, files.rlim_cur > kSpareFiles ? files.rlim_cur - kSpareFiles : 16));
      c.Log(fmt::format("warning: --max-connections {} lowered to {}: the open-files limit is {}",
                        c.max_connections, fit, files.rlim_cur));
      c.max_connections = fit;
    }
  }
  error_code ec;
  tcp::resolver resolver(c.io);
  const auto endpoints = resolver.resolve(host, std::to_string(port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service,
                                          ec);
  if (ec || endpoints.empty()) {
    return Status::Error(fmt::format("cannot listen on {}:{}: {}", host, port,
                                     ec ? ec.message() : "no such address"));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  c.acceptor.open(endpoint.protocol(), ec);
  if (!ec) c.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) c.acceptor.bind(endpoint, ec);
  if (!ec) c.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    c.acceptor.close(ignored);
    return Status::Error(fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
  }
  return static_cast<int>(c.acceptor.local_endpoint().port());
}

void HttpServer::Run() {
  asio::post(core_->io, [core = core_.get()] { core->Accept(); });
  core_->io.run();
  core_->pool.join();
}

void HttpServer::Stop() {
  asio::post(core_->io, [core = core_.get()] { core->StopOnIoThread(); });
}

HttpStats HttpServer::Stats() const {
  const Core& c = *core_;
  HttpStats s;
  s.connections_open = c.open;
  s.connections_accepted = c.accepted;
  s.connections_closed_at_cap = c.closed_at_cap;
  s.connections_refused = c.refused_at_cap;
  s.refused_400 = c.refused[0];
  s.refused_408 = c.refused[1];
  s.refused_413 = c.refused[2];
  s.refused_414 = c.refused[3];
  s.refused_415 = c.refused[4];
  s.refused_431 = c.refused[5];
  s.responses_abandoned = c.abandoned;
  return s;
}

}  // namespace h2o::server
