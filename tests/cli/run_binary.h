// Runs the real `h2o` binary and captures what a user would see.
#pragma once

#include <string>

namespace h2o::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `h2o <args>` through /bin/sh (args are shell words, quote as needed)
// with standard input from stdin_path.
RunResult RunH2o(const std::string& args, const std::string& stdin_path = "/dev/null");

// A failed command must exit non-zero (not by a signal), print nothing on
// stdout, and print exactly one line on stderr: "h2o: error: ..." that
// contains `needle`.
void ExpectOneErrorLine(const RunResult& r, const std::string& needle);

// A usage error (a parse error, a bad flag value): ExpectOneErrorLine and
// exit code 2. Runtime errors exit 1.
void ExpectUsageError(const RunResult& r, const std::string& needle);

}  // namespace h2o::testing
