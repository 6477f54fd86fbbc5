// A map from byte strings (token pieces) to token ids, for the lookups that
// dominate encoding. Open addressing over one arena of key bytes: no node
// per key to chase, unlike std::unordered_map.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace h2o {

// Not thread-safe while being filled; Find is const and thread-safe.
class PieceTable {
 public:
  // Sizes the table for about `expected` keys (more are accepted).
  explicit PieceTable(size_t expected = 0);

  // Maps `piece` to `id`. An existing key keeps its id unless `replace`.
  void Insert(std::string_view piece, int32_t id, bool replace);

  // The id of `piece`, or -1 when absent.
  int32_t Find(std::string_view piece) const;

  size_t size() const { return n_keys_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;  // of the key in arena_
    uint32_t length = 0;
    int32_t id = -1;  // -1: empty
  };

  // Index of the slot holding `piece`, or of the empty slot where it goes.
  size_t Probe(std::string_view piece, uint64_t hash) const;
  void Grow();

  std::vector<Slot> slots_;  // a power of two, at most half full
  std::string arena_;
  size_t n_keys_ = 0;
};

}  // namespace h2o
