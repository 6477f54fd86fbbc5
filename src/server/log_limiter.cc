#include "server/log_limiter.h"

#include <fmt/format.h>

#include <utility>

namespace h2o::server {
namespace {

// A client's bytes reach the log inside messages (a path, a KV spec): no
// control characters (a terminal's escape sequences), and not at length.
constexpr size_t kMaxLineBytes = 400;

void Sanitize(std::string& line) {
  if (line.size() > kMaxLineBytes) {
    line.resize(kMaxLineBytes);
    line += "...";
  }
  for (char& c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
}

}  // namespace

LogLimiter::LogLimiter(std::function<void(const std::string&)> log, int32_t lines_per_second)
    : log_(std::move(log)), lines_per_second_(lines_per_second) {}

void LogLimiter::Line(std::string line) {
  if (!log_) return;
  std::unique_lock<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - window_ >= std::chrono::seconds(1)) {
    window_ = now;
    lines_ = 0;
  }
  if (lines_ >= lines_per_second_) {
    ++dropped_;
    return;
  }
  ++lines_;
  Sanitize(line);
  if (dropped_ > 0) {
    line += fmt::format(" ({} more lines before this one were not logged)", dropped_);
    dropped_ = 0;
  }
  lock.unlock();
  log_(line);
}

}  // namespace h2o::server
