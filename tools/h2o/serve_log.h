// What `h2o serve` prints on stderr: the start-up banner, a line per
// finished request and the server's own lines (refusals, drains), as text
// ("h2o serve: ...") or with --log-format json one JSON object a line
// ({"time", "level", "msg"} and, for a request, its figures), which log
// collectors read without a parser of their own.
#pragma once

#include <string>
#include <vector>

#include "server/server.h"

namespace h2o::cli {

enum class LogFormat { kText, kJson };

class ServeLog {
 public:
  // quiet: the banner and the request lines are left out (-q).
  ServeLog(LogFormat format, bool quiet) : format_(format), quiet_(quiet) {}

  void Info(const std::string& message) const;  // left out when quiet
  void Line(const std::string& message) const;  // always (refusals, errors, start and stop)
  void Request(const server::RequestRecord& record) const;

 private:
  void Write(const std::string& level, const std::string& message,
             const server::RequestRecord* record) const;
  LogFormat format_;
  bool quiet_;
};

// The banner's lines: build and kernels, model, context and KV policy
// (as given and as `kv_resolved` at the context), memory, threads.
std::vector<std::string> BannerLines(const server::ServerOptions& options, const Model& model,
                                     const std::string& kv_resolved, const std::string& kv_types);

}  // namespace h2o::cli
