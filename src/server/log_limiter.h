// The server log under a flood: at most a few lines a second reach the
// log, the rest are counted and reported with the next line that does, so
// an attacker cannot fill a disk or a terminal through refusals. Lines are
// cut at 400 bytes and control characters shown as '?': they quote what
// clients sent.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace h2o::server {

class LogLimiter {
 public:
  // `log` may be empty (nothing is logged).
  LogLimiter(std::function<void(const std::string&)> log, int32_t lines_per_second);

  // Thread-safe.
  void Line(std::string line);

 private:
  const std::function<void(const std::string&)> log_;
  const int32_t lines_per_second_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point window_{};
  int32_t lines_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace h2o::server
