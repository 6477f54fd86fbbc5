// What `h2o` prints on stderr besides errors: notes (timings, memory,
// "wrote FILE"), which -q/--quiet and --log-disable turn off on every
// command, and warnings, which stay: they say the experiment is not the
// one asked for.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <string>

namespace h2o::cli {

// Adds -q/--quiet and --log-disable (llama.cpp's name) to `cmd`.
void AddQuietFlags(CLI::App& cmd);
bool Quiet();

// "<message>\n" on stderr unless Quiet().
void Note(const std::string& message);
// "h2o: warning: <message>\n" on stderr, quiet or not; once per message.
void Warn(const std::string& message);

template <typename... Args>
void Note(fmt::format_string<Args...> format, Args&&... args) {
  if (!Quiet()) Note(fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> format, Args&&... args) {
  Warn(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace h2o::cli
