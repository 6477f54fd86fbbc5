#include "cli_log.h"

#include <cstdio>
#include <set>

namespace h2o::cli {
namespace {

// One process, one command line: a global is the honest shape of it.
bool quiet = false;

}  // namespace

void AddQuietFlags(CLI::App& cmd) {
  cmd.add_flag("-q,--quiet", quiet, "print only results, warnings and errors (no timings, no "
                                    "memory figures, no progress bar)");
  cmd.add_flag("--log-disable", quiet, "the same as --quiet");
}

bool Quiet() { return quiet; }

void Note(const std::string& message) {
  if (quiet) return;
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", message.c_str());
}

void Warn(const std::string& message) {
  // Once: perplexity resolves a percentage budget per stream, with the
  // same outcome for streams of one length.
  static std::set<std::string> said;
  if (!said.insert(message).second) return;
  std::fflush(stdout);
  std::fprintf(stderr, "h2o: warning: %s\n", message.c_str());
}

}  // namespace h2o::cli
