#include "server/metrics.h"

#include <fmt/format.h>

#include <utility>

namespace h2o::server {
namespace {

void Add(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

// The requests the HTTP layer refused before a handler saw them, by status.
void AddRefusals(std::string& out, const HttpStats& http) {
  constexpr const char* kName = "h2o_http_refused_total";
  out += fmt::format(
      "# HELP {} Requests refused by a limit (--max-header-size, --max-headers, --max-body, "
      "the timeouts) or as malformed, by status.\n# TYPE {} counter\n",
      kName, kName);
  const std::pair<int, int64_t> by_status[] = {{400, http.refused_400}, {408, http.refused_408},
                                               {413, http.refused_413}, {414, http.refused_414},
                                               {415, http.refused_415}, {431, http.refused_431}};
  for (const auto& [status, count] : by_status) {
    out += fmt::format("{}{{status=\"{}\"}} {}\n", kName, status, count);
  }
}

}  // namespace

std::string Metrics::Render(const SchedulerStats& stats, const HttpStats& http) {
  double tokens_per_second = 0.0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_scrape_).count();
    const int64_t generated = generated_tokens.load();
    if (seconds > 0) tokens_per_second = static_cast<double>(generated - last_generated_) / seconds;
    last_scrape_ = now;
    last_generated_ = generated;
  }
  std::string out;
  Add(out, "h2o_requests_total", "counter", "Completion requests received.",
      static_cast<double>(requests.load()));
  Add(out, "h2o_request_errors_total", "counter", "Requests answered with an error status.",
      static_cast<double>(request_errors.load()));
  Add(out, "h2o_requests_cancelled_total", "counter", "Requests ended by the client leaving.",
      static_cast<double>(cancelled.load()));
  Add(out, "h2o_prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
      static_cast<double>(prompt_tokens.load()));
  Add(out, "h2o_generated_tokens_total", "counter", "Tokens generated.",
      static_cast<double>(generated_tokens.load()));
  Add(out, "h2o_tokens_per_second", "gauge", "Tokens generated per second since the last scrape.",
      tokens_per_second);
  Add(out, "h2o_queue_depth", "gauge", "Requests waiting for KV memory.", stats.queued);
  Add(out, "h2o_running_sequences", "gauge", "Sequences being prefilled or decoded.",
      stats.running);
  Add(out, "h2o_kv_bytes_in_use", "gauge", "KV cache bytes reserved by running sequences.",
      static_cast<double>(stats.kv_reserved_bytes));
  Add(out, "h2o_kv_bytes_limit", "gauge", "The KV memory limit (--kv-mem).",
      static_cast<double>(stats.kv_limit_bytes));
  Add(out, "h2o_evictions_total", "counter", "Tokens evicted by finished sequences' KV policies.",
      static_cast<double>(stats.evictions));
  Add(out, "h2o_prompt_cache_bytes", "gauge", "Bytes of finished requests' states kept.",
      static_cast<double>(stats.prompt_cache_bytes));
  Add(out, "h2o_prompt_cache_states", "gauge", "Finished requests' states kept.",
      stats.prompt_cache_entries);
  Add(out, "h2o_prompt_cache_hits_total", "counter", "Requests resumed from a kept state.",
      static_cast<double>(stats.prompt_cache_hits));
  Add(out, "h2o_prompt_cache_tokens_reused_total", "counter",
      "Prompt tokens resumed from kept states instead of fed.",
      static_cast<double>(stats.prompt_cache_tokens_reused));
  Add(out, "h2o_prompt_cache_evictions_total", "counter",
      "Kept states dropped to make room (for requests or newer states).",
      static_cast<double>(stats.prompt_cache_evictions));
  Add(out, "h2o_prompt_cache_shared_prefixes_total", "counter",
      "States kept after a shared prefix (a chat's system prompt), for every conversation that "
      "begins with it.",
      static_cast<double>(stats.prompt_cache_shared_kept));
  Add(out, "h2o_http_connections_open", "gauge", "Open client connections.",
      static_cast<double>(http.connections_open));
  Add(out, "h2o_http_connections_total", "counter", "Client connections accepted.",
      static_cast<double>(http.connections_accepted));
  Add(out, "h2o_http_connections_closed_at_cap_total", "counter",
      "Idle or slow connections closed to admit a new one at --max-connections.",
      static_cast<double>(http.connections_closed_at_cap));
  Add(out, "h2o_http_connections_refused_total", "counter",
      "Connections refused (503) at --max-connections with every connection busy.",
      static_cast<double>(http.connections_refused));
  Add(out, "h2o_http_responses_abandoned_total", "counter",
      "Responses whose client closed, reset or stopped reading before their end.",
      static_cast<double>(http.responses_abandoned));
  AddRefusals(out, http);
  return out;
}

}  // namespace h2o::server
