#include "report/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace h2o {
namespace {

constexpr int kBarWidth = 24;
constexpr auto kRedrawInterval = std::chrono::milliseconds(200);

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const int64_t s = std::llround(seconds);
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

std::string FormatRate(double per_second) {
  if (!std::isfinite(per_second) || per_second <= 0) return "--/s";
  if (per_second >= 100) return fmt::format("{:.0f}/s", per_second);
  if (per_second >= 1) return fmt::format("{:.1f}/s", per_second);
  return fmt::format("{:.2f}/s", per_second);
}

}  // namespace

std::string FormatProgressLine(std::string_view label, int64_t done, int64_t total,
                               double elapsed_s) {
  const double rate = elapsed_s > 0 && done > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  if (total <= 0) {
    return fmt::format("{} {}  {}  {}", label, done, FormatRate(rate), FormatDuration(elapsed_s));
  }
  const int64_t clamped = std::clamp<int64_t>(done, 0, total);
  const int64_t filled = clamped * kBarWidth / total;
  const std::string bar = std::string(static_cast<size_t>(filled), '#') +
                          std::string(static_cast<size_t>(kBarWidth - filled), '-');
  const std::string time =
      done >= total
          ? "done in " + FormatDuration(elapsed_s)
          : "ETA " + FormatDuration(rate > 0 ? static_cast<double>(total - done) / rate : -1.0);
  return fmt::format("{} [{}]  {}/{}  {}%  {}  {}", label, bar, done, total, clamped * 100 / total,
                     FormatRate(rate), time);
}

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (enabled_) Draw();
}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Advance(int64_t n) {
  done_ += n;
  if (!enabled_ || finished_) return;
  if (std::chrono::steady_clock::now() - last_draw_ >= kRedrawInterval) Draw();
}

void ProgressBar::Finish() {
  if (!enabled_ || finished_) return;
  Draw();
  std::fputc('\n', stderr);
  std::fflush(stderr);
  finished_ = true;
}

bool ProgressBar::Enabled(bool quiet) { return !quiet && isatty(STDERR_FILENO) == 1; }

void ProgressBar::Draw() {
  last_draw_ = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(last_draw_ - start_).count();
  std::string line = FormatProgressLine(label_, done_, total_, elapsed);
  const size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  last_width_ = width;
  std::fputc('\r', stderr);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace h2o
