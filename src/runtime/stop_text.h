// Generated pieces to text deltas a client may see: the text ends where the
// first stop string begins, and bytes that could still become the start of
// one (or an unfinished UTF-8 character) are held back until the next
// piece decides, so a stream never shows part of a stop string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace h2o {

class StopText {
 public:
  explicit StopText(std::vector<std::string> stops);  // empty strings ignored

  // Appends a piece; returns the text that became safe to emit. After a
  // stop string, stopped() and nothing more is emitted.
  std::string Add(std::string_view piece);
  // The held-back rest once generation ended (nothing after a stop).
  std::string Finish();

  bool stopped() const { return stopped_; }

 private:
  // Bytes at the end of all_ that a later piece could extend into a stop
  // string or complete into a UTF-8 character.
  size_t HeldBack() const;

  std::vector<std::string> stops_;
  std::string all_;     // every piece so far
  size_t emitted_ = 0;  // bytes of all_ handed out
  bool stopped_ = false;
};

}  // namespace h2o
