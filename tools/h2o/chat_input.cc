#include "chat_input.h"

#include <editline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace h2o::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted = true; }

bool StdinIsTerminal() {
  static const bool terminal = isatty(STDIN_FILENO) == 1;
  return terminal;
}

Input ReadEdited(const char* prompt) {
  static const bool initialized = [] {
    rl_readline_name = "h2o";  // ~/.editrc lines prefixed "h2o:" apply
    // Our SIGINT handler stays in place while a line is read (libedit's own
    // would re-raise the signal at the whole process group); the read
    // returns at Ctrl-C.
    rl_catch_signals = 0;
    return true;
  }();
  (void)initialized;
  std::unique_ptr<char, decltype(&std::free)> line(readline(prompt), &std::free);
  if (g_interrupted) return {InputEnd::kInterrupted, {}};
  if (!line) return {InputEnd::kEndOfInput, {}};
  if (line.get()[0] != '\0') add_history(line.get());
  return {InputEnd::kLine, line.get()};
}

Input ReadPlain(const char* prompt) {
  std::fputs(prompt, stdout);
  std::fflush(stdout);
  Input input;
  if (!std::getline(std::cin, input.line)) {
    std::cin.clear();
    input.end = g_interrupted ? InputEnd::kInterrupted : InputEnd::kEndOfInput;
    return input;
  }
  input.end = g_interrupted ? InputEnd::kInterrupted : InputEnd::kLine;
  return input;
}

}  // namespace

void CatchInterrupt() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a blocking read returns at Ctrl-C.
  sigaction(SIGINT, &action, nullptr);
}

bool Interrupted() { return g_interrupted; }

void ClearInterrupt() { g_interrupted = false; }

Input ReadInput(const char* prompt) {
  std::fflush(stdout);
  return StdinIsTerminal() ? ReadEdited(prompt) : ReadPlain(prompt);
}

}  // namespace h2o::cli
