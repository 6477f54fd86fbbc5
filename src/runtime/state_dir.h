// `h2o serve --cache-dir DIR`: the prompt cache's second tier on disk, and
// the named conversations /slots saves. The scheduler writes the states it
// drops from RAM into DIR/prompt-cache/ (one file each, named by a hash of
// their tokens and plan) and, at shutdown, every state still in RAM; at
// start the directory's files of this model are indexed by their tokens,
// so a conversation resumes from disk after a restart exactly as it would
// have from RAM. Named saves are DIR/NAME (state_file.h's format).
//
// A file that cannot be read, is corrupt or of another model is skipped
// with one log line and left where it is. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/state_file.h"

namespace h2o {

class StateDir {
 public:
  using Log = std::function<void(const std::string& line)>;

  // Creates DIR and DIR/prompt-cache when missing and indexes the latter.
  // Errors: DIR cannot be made or read.
  static Result<std::unique_ptr<StateDir>> Open(const std::string& dir, uint64_t model_fingerprint,
                                                Log log);

  uint64_t model_fingerprint() const { return fingerprint_; }

  // Keeps the state after `tokens` as a file, replacing one of the same
  // tokens and plan. Errors: the write failed (nothing indexed).
  Status Put(std::span<const int32_t> tokens, const SequenceState& state);

  // The longest kept state of plan `kv_plan` whose tokens begin `tokens`,
  // more than `at_least` of them, fewer than all (or all, when it kept
  // the logits after them), read and checked; `can_load` has the last
  // word. A file that no longer reads is dropped from the index (logged).
  std::optional<StoredState> Find(std::span<const int32_t> tokens, const std::string& kv_plan,
                                  size_t at_least,
                                  const std::function<bool(const SequenceState&)>& can_load);

  // Removes the files of plan `kv_plan` whose tokens are fewer than
  // `tokens` and begin it (a conversation's turns a newer one supersedes).
  void DropPrefixesOf(std::span<const int32_t> tokens, const std::string& kv_plan);

  // Removes the files (of any plan) whose tokens begin `tokens`, up to
  // all of them. Returns how many.
  size_t EraseWithin(std::span<const int32_t> tokens);

  // Named saves. A name is 1 to 128 of [A-Za-z0-9._-], not beginning with
  // a dot: never a path.
  static Status CheckName(std::string_view name);
  Result<size_t> SaveNamed(const std::string& name, std::span<const int32_t> tokens,
                           const SequenceState& state);
  // Copies the kept file of exactly `tokens` (the most recent, any plan) to
  // save `name`; nullopt when none is kept. Returns the bytes.
  Result<std::optional<size_t>> CopyToNamed(std::span<const int32_t> tokens,
                                            const std::string& name);
  // nullopt: no such save.
  Result<std::optional<StoredState>> ReadNamed(const std::string& name) const;

  size_t size() const;  // indexed prompt-cache files
  size_t bytes() const;

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    std::string kv_plan;
    bool has_logits;
    std::string path;
    size_t bytes;
  };
  StateDir(std::string dir, uint64_t fingerprint, Log log)
      : dir_(std::move(dir)), fingerprint_(fingerprint), log_(std::move(log)) {}
  std::string CachePath(std::span<const int32_t> tokens, const std::string& kv_plan) const;
  void Forget(const std::string& path);  // under mu_

  std::string dir_;
  uint64_t fingerprint_;
  Log log_;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace h2o
