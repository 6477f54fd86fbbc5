// A one-line progress bar on stderr (count, percent, rate, ETA) for eval
// runs that take more than a few seconds, so a person at a terminal sees
// that the run is alive and when it will end. Off when stderr is not a
// terminal or with --quiet, so logs and pipes get no '\r' noise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace h2o {

// The bar's text, without '\r' or newline. With a known total (> 0):
//   "label [#########---------------]  12/32  37%  3.4/s  ETA 0:06"
// and once done >= total, "done in m:ss" in place of the ETA. With
// total <= 0 (unknown): "label 12  3.4/s  0:03". The rate is done /
// elapsed_s, "--/s" before any time or work has passed; the ETA is
// (total - done) / rate, "--:--" when unknown. Times are m:ss, or h:mm:ss
// from an hour. Pure.
std::string FormatProgressLine(std::string_view label, int64_t done, int64_t total,
                               double elapsed_s);

// Draws FormatProgressLine on stderr, starting with '\r' so each redraw
// replaces the last, at most about 5 times per second however often
// Advance is called; Finish draws the final state and ends the line. A
// disabled bar prints nothing at all. Not thread-safe: advance it from one
// thread.
class ProgressBar {
 public:
  // Draws the 0-of-total line at once when enabled.
  ProgressBar(std::string label, int64_t total, bool enabled);
  // Finishes the bar, so an error message printed after it starts on a
  // line of its own.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Advance(int64_t n = 1);
  // Draws the final line and a newline; later calls do nothing.
  void Finish();

  // Whether a command should show a bar: stderr is a terminal and the
  // user did not ask for --quiet.
  static bool Enabled(bool quiet);

 private:
  void Draw();

  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  size_t last_width_ = 0;  // to blank the tail of a longer previous line
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace h2o
