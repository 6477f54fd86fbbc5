// A prompt-cache state in a file: `h2o serve --cache-dir` writes the states
// it drops from RAM there and keeps named conversations saved through
// /slots, so a conversation resumes after a restart. Versioned; the file
// names the model it was made with (ModelFingerprint) and carries a
// checksum over everything after the magic; written whole to a temporary
// name and renamed, so a reader sees the old file or the new one. A file
// that is truncated, corrupt, of another version or another model is
// refused with one line naming it; what it holds is checked again by
// Sequence::CanLoadState before any of it is used.
//
// Layout (little-endian): "H2OSTATE", u32 version, u64 model fingerprint,
// then the key (the KV plan, pos-shift, whether it kept logits, n_past,
// the token ids), then the
// body (the policy's name and state bytes, the cache's KvCacheState
// fields, the last logits), then u64 FNV-1a of everything from the version
// on. Lengths are u64 counts before each array.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model.h"
#include "runtime/sequence.h"

namespace h2o {

inline constexpr uint32_t kStateFileVersion = 1;

// Names a model file's contents: its size, tensor table and the first and
// last bytes of every tensor's data, hashed. Two different files of one
// shape (other weights) differ; the same file under another name agrees.
uint64_t ModelFingerprint(const Model& model);

// What the index of a directory of states needs: the state's tokens and
// plan, without its rows.
struct StateFileKey {
  std::string kv_plan;
  bool pos_shift = false;
  bool has_logits = false;  // the logits after the last token are kept
  int32_t n_past = 0;
  std::vector<int32_t> tokens;
};

struct StoredState {
  std::vector<int32_t> tokens;
  SequenceState state;
  size_t file_bytes = 0;  // the file's size, as read
};

// Writes the state after `tokens` to `path`, atomically. Returns the bytes
// written.
Result<size_t> WriteStateFile(const std::string& path, uint64_t model_fingerprint,
                              std::span<const int32_t> tokens, const SequenceState& state);

// The key alone (the file's start; its checksum is not read).
Result<StateFileKey> ReadStateFileKey(const std::string& path, uint64_t model_fingerprint);

// The whole state, its checksum and structure checked; its policy object
// made from its KV plan and given its state bytes.
Result<StoredState> ReadStateFile(const std::string& path, uint64_t model_fingerprint);

}  // namespace h2o
