#include "tokenizer/piece_table.h"

#include <cstring>

#include "core/status.h"

namespace h2o {
namespace {

uint64_t HashPiece(std::string_view piece) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: pieces are a few bytes long
  for (char c : piece) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

PieceTable::PieceTable(size_t expected) {
  size_t n_slots = 16;
  while (n_slots < 2 * expected) n_slots *= 2;
  slots_.resize(n_slots);
}

size_t PieceTable::Probe(std::string_view piece, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.id < 0) return i;
    if (s.hash == hash && s.length == piece.size() &&
        std::memcmp(arena_.data() + s.offset, piece.data(), piece.size()) == 0) {
      return i;
    }
  }
}

void PieceTable::Insert(std::string_view piece, int32_t id, bool replace) {
  H2O_CHECK(id >= 0);
  H2O_CHECK(arena_.size() + piece.size() <= UINT32_MAX);
  if (2 * (n_keys_ + 1) > slots_.size()) Grow();
  const uint64_t hash = HashPiece(piece);
  Slot& s = slots_[Probe(piece, hash)];
  if (s.id >= 0) {
    if (replace) s.id = id;
    return;
  }
  s = {hash, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(piece.size()), id};
  arena_.append(piece);
  ++n_keys_;
}

int32_t PieceTable::Find(std::string_view piece) const {
  return slots_[Probe(piece, HashPiece(piece))].id;
}

void PieceTable::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id < 0) continue;
    size_t i = s.hash & mask;
    while (slots_[i].id >= 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

}  // namespace h2o
