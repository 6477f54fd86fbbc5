// What `h2o chat` reads from its user: lines edited with libedit (arrow
// keys, history, ~/.editrc) when stdin is a terminal, plain lines from a
// pipe or a file; and Ctrl-C, which never ends the process by itself: it
// stops a reply, or asks before leaving at the prompt.
#pragma once

#include <string>

namespace h2o::cli {

// From here on SIGINT sets a flag (Interrupted) instead of ending the
// process, and interrupts a blocking read.
void CatchInterrupt();
bool Interrupted();
void ClearInterrupt();

enum class InputEnd { kLine, kInterrupted, kEndOfInput };

struct Input {
  InputEnd end = InputEnd::kEndOfInput;
  std::string line;  // when kLine: without its newline
};

// Shows `prompt` and reads one line. A line typed at a terminal joins the
// history (the up arrow brings it back).
Input ReadInput(const char* prompt);

}  // namespace h2o::cli
