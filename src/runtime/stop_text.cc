#include "runtime/stop_text.h"

#include <algorithm>

namespace h2o {
namespace {

// Bytes of an unfinished UTF-8 sequence at the end of s (0 if it ends on a
// character boundary or with bytes no character could use).
size_t UnfinishedUtf8(std::string_view s) {
  for (size_t back = 1; back <= std::min<size_t>(3, s.size()); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

StopText::StopText(std::vector<std::string> stops) {
  for (std::string& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

size_t StopText::HeldBack() const {
  const std::string_view tail = std::string_view(all_).substr(emitted_);
  size_t hold = UnfinishedUtf8(tail);
  for (const std::string& stop : stops_) {
    // The longest suffix of the tail that is a proper prefix of the stop.
    for (size_t k = std::min(stop.size() - 1, tail.size()); k > hold; --k) {
      if (tail.substr(tail.size() - k) == std::string_view(stop).substr(0, k)) {
        hold = k;
        break;
      }
    }
  }
  return hold;
}

std::string StopText::Add(std::string_view piece) {
  if (stopped_) return {};
  all_ += piece;
  // Every byte that could begin a stop string is still held back, so a stop
  // found now begins at or after emitted_.
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, all_.find(stop, emitted_));
  size_t end = first;
  if (first != std::string::npos) {
    stopped_ = true;
  } else {
    end = all_.size() - HeldBack();
  }
  std::string out = all_.substr(emitted_, end - emitted_);
  emitted_ = end;
  return out;
}

std::string StopText::Finish() {
  if (stopped_) return {};
  std::string out = all_.substr(emitted_);
  emitted_ = all_.size();
  return out;
}

}  // namespace h2o
