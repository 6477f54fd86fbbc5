// The server's counters and their Prometheus text exposition (/metrics),
// with the scheduler's gauges (queue depth, running sequences, KV bytes in
// use against the limit, evictions) and the connections' (open, closed or
// refused at the cap, requests refused by each limit).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "runtime/scheduler.h"
#include "server/http_server.h"

namespace h2o::server {

struct Metrics {
  std::atomic<int64_t> requests{0};        // completion requests received
  std::atomic<int64_t> request_errors{0};  // answered with an error status
  std::atomic<int64_t> cancelled{0};       // ended by the client leaving
  std::atomic<int64_t> prompt_tokens{0};
  std::atomic<int64_t> generated_tokens{0};

  // Prometheus text format; tokens per second is the generation rate since
  // the previous scrape (thread-safe).
  std::string Render(const SchedulerStats& stats, const HttpStats& http);

 private:
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_scrape_ = std::chrono::steady_clock::now();
  int64_t last_generated_ = 0;
};

}  // namespace h2o::server
