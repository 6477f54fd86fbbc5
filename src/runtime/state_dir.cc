#include "runtime/state_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/fnv1a.h"

namespace h2o {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCacheSubdir = "prompt-cache";
constexpr const char* kCacheSuffix = ".h2ostate";
constexpr size_t kMaxNameLength = 128;

bool BeginsWith(std::span<const int32_t> tokens, std::span<const int32_t> prefix) {
  return prefix.size() <= tokens.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

uint64_t KeyHash(std::span<const int32_t> tokens, const std::string& kv_plan) {
  Fnv1a64 h;
  h.Add(kv_plan.data(), kv_plan.size());
  h.Add(tokens.data(), tokens.size_bytes());
  return h.h;
}

}  // namespace

Result<std::unique_ptr<StateDir>> StateDir::Open(const std::string& dir, uint64_t fingerprint,
                                                 Log log) {
  std::error_code ec;
  const fs::path cache = fs::path(dir) / kCacheSubdir;
  fs::create_directories(cache, ec);
  if (ec) return Status::Error(fmt::format("{}: cannot make the cache directory: {}", dir, ec.message()));
  std::unique_ptr<StateDir> d(new StateDir(dir, fingerprint, std::move(log)));
  for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (!it->is_regular_file() || path.extension() != kCacheSuffix) continue;
    auto key = ReadStateFileKey(path.string(), fingerprint);
    if (!key.ok()) {
      if (d->log_) d->log_(key.status().message() + " (skipped)");
      continue;
    }
    d->entries_.push_back({std::move(key->tokens), std::move(key->kv_plan), key->has_logits,
                           path.string(), static_cast<size_t>(it->file_size(ec))});
  }
  if (ec) return Status::Error(fmt::format("{}: cannot read the cache directory: {}", dir, ec.message()));
  return d;
}

std::string StateDir::CachePath(std::span<const int32_t> tokens, const std::string& kv_plan) const {
  return (fs::path(dir_) / kCacheSubdir /
          fmt::format("{:016x}-{}{}", KeyHash(tokens, kv_plan), tokens.size(), kCacheSuffix))
      .string();
}

void StateDir::Forget(const std::string& path) {
  std::erase_if(entries_, [&](const Entry& e) { return e.path == path; });
}

Status StateDir::Put(std::span<const int32_t> tokens, const SequenceState& state) {
  const std::string path = CachePath(tokens, state.kv_plan);
  H2O_ASSIGN_OR_RETURN(const size_t bytes, WriteStateFile(path, fingerprint_, tokens, state));
  std::lock_guard<std::mutex> lock(mu_);
  Forget(path);
  entries_.push_back({std::vector<int32_t>(tokens.begin(), tokens.end()), state.kv_plan,
                      !state.last_logits.empty(), path, bytes});
  return Status::Ok();
}

std::optional<StoredState> StateDir::Find(
    std::span<const int32_t> tokens, const std::string& kv_plan, size_t at_least,
    const std::function<bool(const SequenceState&)>& can_load) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const Entry* best = nullptr;
    for (const Entry& e : entries_) {
      const bool usable = e.tokens.size() < tokens.size() ||
                          (e.tokens.size() == tokens.size() && e.has_logits);
      if (e.kv_plan != kv_plan || !usable || e.tokens.size() <= at_least ||
          !BeginsWith(tokens, e.tokens) || (best && best->tokens.size() >= e.tokens.size())) {
        continue;
      }
      best = &e;
    }
    if (best == nullptr) return std::nullopt;
    const std::string path = best->path;
    auto stored = ReadStateFile(path, fingerprint_);
    if (stored.ok() && BeginsWith(tokens, stored->tokens) && can_load(stored->state)) {
      return std::move(stored).value();
    }
    if (log_) {
      log_(stored.ok() ? path + ": its state does not fit this request's cache (skipped)"
                       : stored.status().message() + " (skipped)");
    }
    Forget(path);  // and look for the next longest
  }
}

void StateDir::DropPrefixesOf(std::span<const int32_t> tokens, const std::string& kv_plan) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_, [&](const Entry& e) {
    if (e.kv_plan != kv_plan || e.tokens.size() >= tokens.size() || !BeginsWith(tokens, e.tokens)) {
      return false;
    }
    std::error_code ec;
    fs::remove(e.path, ec);
    return true;
  });
}

size_t StateDir::EraseWithin(std::span<const int32_t> tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::erase_if(entries_, [&](const Entry& e) {
    if (!BeginsWith(tokens, e.tokens)) return false;
    std::error_code ec;
    fs::remove(e.path, ec);
    return true;
  });
}

Status StateDir::CheckName(std::string_view name) {
  const bool ok_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  });
  if (name.empty() || name.size() > kMaxNameLength || !ok_chars || name.front() == '.') {
    return Status::Error(fmt::format(
        "'{}' is not a save name: 1 to {} of the letters, digits, '.', '_' and '-', not "
        "beginning with '.' (a name, never a path)",
        name.substr(0, kMaxNameLength), kMaxNameLength));
  }
  return Status::Ok();
}

Result<size_t> StateDir::SaveNamed(const std::string& name, std::span<const int32_t> tokens,
                                   const SequenceState& state) {
  H2O_RETURN_IF_ERROR(CheckName(name));
  return WriteStateFile((fs::path(dir_) / name).string(), fingerprint_, tokens, state);
}

Result<std::optional<size_t>> StateDir::CopyToNamed(std::span<const int32_t> tokens,
                                                    const std::string& name) {
  H2O_RETURN_IF_ERROR(CheckName(name));
  std::lock_guard<std::mutex> lock(mu_);
  // Put appends, so the last match is the most recent.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (!std::equal(it->tokens.begin(), it->tokens.end(), tokens.begin(), tokens.end())) continue;
    const fs::path to = fs::path(dir_) / name;
    const fs::path tmp = fs::path(dir_) / ("." + name + ".tmp");
    std::error_code ec;
    fs::copy_file(it->path, tmp, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(tmp, to, ec);
    if (ec) {
      const std::string why = ec.message();
      fs::remove(tmp, ec);
      return Status::Error(fmt::format("{}: cannot write the save: {}", to.string(), why));
    }
    return std::optional<size_t>(it->bytes);
  }
  return std::optional<size_t>();
}

Result<std::optional<StoredState>> StateDir::ReadNamed(const std::string& name) const {
  H2O_RETURN_IF_ERROR(CheckName(name));
  const fs::path path = fs::path(dir_) / name;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::optional<StoredState>();
  H2O_ASSIGN_OR_RETURN(StoredState stored, ReadStateFile(path.string(), fingerprint_));
  return std::optional<StoredState>(std::move(stored));
}

size_t StateDir::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t StateDir::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t total = 0;
  for (const Entry& e : entries_) total += e.bytes;
  return total;
}

}  // namespace h2o
