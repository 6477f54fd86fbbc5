#include "server/serve_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "test_data.h"

namespace h2o::testing {
namespace {

using Clock = std::chrono::steady_clock;

int64_t StatusKiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1);
  }
  return -1;
}

// Bytes available within the deadline, appended to `out`; false at the end
// of the stream, an error or the deadline.
bool ReadSome(int fd, std::string& out, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buf[64 * 1024];
  const ssize_t n = recv(fd, buf, sizeof(buf), 0);
  if (n <= 0) return false;
  out.append(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

ServeProcess::ServeProcess(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  // H2O_SERVE_BINARY runs the attacks against another build (an older one,
  // to see what they did before its limits).
  const char* binary = std::getenv("H2O_SERVE_BINARY");
  std::vector<std::string> argv = {binary != nullptr ? binary : H2O_BINARY, "serve", "-m",
                                   ModelPath(), "--port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ == 0) {
    dup2(pipe_fds[1], 2);
    const int null_fd = open("/dev/null", O_RDWR);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  stderr_fd_ = pipe_fds[0];
  reader_ = std::thread([this] {
    char buf[4096];
    for (;;) {
      const ssize_t n = read(stderr_fd_, buf, sizeof(buf));
      if (n <= 0) return;
      std::lock_guard<std::mutex> lock(mu_);
      log_.append(buf, static_cast<size_t>(n));
    }
  });
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  const std::string marker = "listening on http://127.0.0.1:";
  while (Clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      const size_t at = log_.find(marker);
      if (at != std::string::npos && log_.find('\n', at) != std::string::npos) {
        port_ = std::atoi(log_.c_str() + at + marker.size());
        return;
      }
    }
    if (waitpid(pid_, &exit_status_, WNOHANG) == pid_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("h2o serve did not start: " + Log());
}

// A server that does not drain and exit 0 on SIGTERM (or that a sanitizer
// stopped) fails the test that ran it.
ServeProcess::~ServeProcess() {
  const bool running = pid_ > 0;
  const int status = Stop();
  if (reader_.joinable()) reader_.join();
  if (stderr_fd_ >= 0) close(stderr_fd_);
  if (running && status != 0) {
    ADD_FAILURE() << "h2o serve exited " << status << " on SIGTERM:\n" << Log();
  }
}

int ServeProcess::Stop() {
  if (pid_ <= 0) return exit_status_;
  kill(pid_, SIGTERM);
  int status = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (Clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return exit_status_;
}

int64_t ServeProcess::RssKiB() const { return StatusKiB(pid_, "VmRSS"); }
int64_t ServeProcess::PeakRssKiB() const { return StatusKiB(pid_, "VmHWM"); }

std::string ServeProcess::Log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

bool ServeProcess::WaitForLog(std::string_view text, std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  do {
    if (Log().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (Clock::now() < deadline);
  return false;
}

int ConnectTo(int port, int rcvbuf) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // A send the server stops reading gives up instead of blocking the test.
  const timeval ten_seconds{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &ten_seconds, sizeof(ten_seconds));
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Reset(int fd) {
  const linger hard{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  close(fd);
}

RawResponse ReadResponse(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  RawResponse r;
  std::string in;
  size_t head_end = std::string::npos;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    if (!ReadSome(fd, in, deadline)) return r;
  }
  r.head = in.substr(0, head_end);
  if (r.head.rfind("HTTP/1.1 ", 0) == 0) r.status = std::atoi(r.head.c_str() + 9);
  std::string rest = in.substr(head_end + 4);
  std::string lower = r.head;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("transfer-encoding: chunked") != std::string::npos) {
    for (;;) {
      size_t eol;
      while ((eol = rest.find("\r\n")) == std::string::npos) {
        if (!ReadSome(fd, rest, deadline)) return r;
      }
      const size_t size = std::strtoul(rest.c_str(), nullptr, 16);
      while (rest.size() < eol + 2 + size + 2) {
        if (!ReadSome(fd, rest, deadline)) return r;
      }
      r.body += rest.substr(eol + 2, size);
      rest.erase(0, eol + 2 + size + 2);
      if (size == 0) {
        r.complete = true;
        return r;
      }
    }
  }
  const size_t at = lower.find("content-length: ");
  const size_t length = at == std::string::npos ? 0 : std::strtoul(lower.c_str() + at + 16, nullptr, 10);
  while (rest.size() < length) {
    if (!ReadSome(fd, rest, deadline)) {
      r.body = rest;
      return r;
    }
  }
  r.body = rest.substr(0, length);
  r.complete = true;
  return r;
}

bool WaitForClose(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[4096];
    if (recv(fd, buf, sizeof(buf), 0) <= 0) return true;
  }
}

std::string PostRequest(const std::string& path, const std::string& body,
                        const std::string& extra_headers) {
  std::ostringstream r;
  r << "POST " << path << " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    << extra_headers << "Content-Length: " << body.size() << "\r\n\r\n"
    << body;
  return r.str();
}

RawResponse Exchange(int port, const std::string& request, std::chrono::milliseconds timeout) {
  const int fd = ConnectTo(port);
  if (fd < 0) return {};
  RawResponse r;
  if (SendAll(fd, request)) r = ReadResponse(fd, timeout);
  close(fd);
  return r;
}

std::optional<double> MetricValue(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::atof(metrics.c_str() + at + name.size() + 2);
}

}  // namespace h2o::testing
