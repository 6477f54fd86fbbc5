// `h2o serve` as a child process on a free port of 127.0.0.1, and a raw
// socket client: what the hostile-client tests need that an HTTP library
// would not do (trickle bytes, never read, reset, send malformed heads),
// and a server whose memory is its own to read from /proc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace h2o::testing {

class ServeProcess {
 public:
  // Starts `h2o serve -m <bundled model> --port 0 <args...>` and waits for
  // its "listening on" line (the binary: $H2O_SERVE_BINARY, else this
  // build's).
  explicit ServeProcess(const std::vector<std::string>& args);
  ~ServeProcess();  // SIGTERM, then waits (SIGKILL after 20 s)
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // From /proc/PID/status: resident now (VmRSS) and at most (VmHWM), KiB.
  int64_t RssKiB() const;
  int64_t PeakRssKiB() const;
  std::string Log() const;  // its stderr so far
  // Waits up to `timeout` for `text` in the log.
  bool WaitForLog(std::string_view text, std::chrono::milliseconds timeout) const;
  // Ends it with SIGTERM; its exit status (-1: killed by a signal).
  int Stop();

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int stderr_fd_ = -1;
  std::thread reader_;
  mutable std::mutex mu_;
  std::string log_;
  int exit_status_ = -1;
};

// A blocking TCP connection to 127.0.0.1:port; -1 on failure. A
// receive buffer of `rcvbuf` bytes when non-zero (set before connecting).
int ConnectTo(int port, int rcvbuf = 0);
// Sends all of `data`; false once the peer has closed or reset.
bool SendAll(int fd, std::string_view data);
// Closes with a reset (SO_LINGER 0) instead of a FIN.
void Reset(int fd);

struct RawResponse {
  int status = 0;        // 0: no status line came
  std::string head;      // status line and headers
  std::string body;      // de-chunked
  bool complete = false;  // the whole body arrived
};

// Reads one response (Content-Length or chunked body) within `timeout`.
RawResponse ReadResponse(int fd, std::chrono::milliseconds timeout);
// Whether the peer closed (or reset) the connection within `timeout`,
// reading and dropping what arrives before.
bool WaitForClose(int fd, std::chrono::milliseconds timeout);
// A whole request with a JSON body.
std::string PostRequest(const std::string& path, const std::string& body,
                        const std::string& extra_headers = "");
// One request on a new connection; the response.
RawResponse Exchange(int port, const std::string& request,
                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The value of metric `name` in a /metrics text; nullopt if absent.
std::optional<double> MetricValue(const std::string& metrics, const std::string& name);

}  // namespace h2o::testing
