#include "runtime/state_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>

#include "core/atomic_file.h"
#include "core/fnv1a.h"
#include "kv/kv_spec.h"

namespace h2o {
namespace {

constexpr char kMagic[8] = {'H', '2', 'O', 'S', 'T', 'A', 'T', 'E'};
// Bytes of the first and last part of each tensor the fingerprint reads.
constexpr size_t kFingerprintSample = 4096;

class Writer {
 public:
  template <typename T>
  void Value(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    out_.append(p, sizeof(T));
  }
  template <typename T>
  void Array(std::span<const T> v) {
    Value<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size_bytes());
  }
  void Text(std::string_view s) { Array(std::span<const char>(s.data(), s.size())); }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

// Reads from a byte range; every read past its end sets failed().
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  template <typename T>
  T Value() {
    T v{};
    if (rest_.size() < sizeof(T)) {
      failed_ = true;
      rest_ = {};
      return v;
    }
    std::memcpy(&v, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return v;
  }
  template <typename T>
  std::vector<T> Array() {
    const auto n = Value<uint64_t>();
    if (failed_ || n > rest_.size() / sizeof(T)) {
      failed_ = true;
      rest_ = {};
      return {};
    }
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), rest_.data(), n * sizeof(T));  // data() may be null
    rest_.remove_prefix(n * sizeof(T));
    return v;
  }
  std::string Text() {
    const std::vector<char> v = Array<char>();
    return std::string(v.begin(), v.end());
  }
  bool failed() const { return failed_; }
  size_t left() const { return rest_.size(); }

 private:
  std::string_view rest_;
  bool failed_ = false;
};

std::string Refused(const std::string& path, std::string_view why) {
  return fmt::format("{}: not a usable h2o state file: {}", path, why);
}

// The magic, version and fingerprint; the rest of `bytes` in `body`.
Status CheckHead(const std::string& path, std::string_view bytes, uint64_t model_fingerprint) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Error(Refused(path, "it does not begin with H2OSTATE"));
  }
  Reader r(bytes.substr(sizeof(kMagic)));
  const auto version = r.Value<uint32_t>();
  const auto fingerprint = r.Value<uint64_t>();
  if (r.failed()) return Status::Error(Refused(path, "truncated"));
  if (version != kStateFileVersion) {
    return Status::Error(
        Refused(path, fmt::format("format version {}, this build reads {}", version,
                                  kStateFileVersion)));
  }
  if (fingerprint != model_fingerprint) {
    return Status::Error(Refused(
        path, fmt::format("made with another model (fingerprint {:016x}, this model's {:016x})",
                          fingerprint, model_fingerprint)));
  }
  return Status::Ok();
}

constexpr size_t kHeadBytes = sizeof(kMagic) + sizeof(uint32_t) + sizeof(uint64_t);

StateFileKey ReadKey(Reader& r) {
  StateFileKey key;
  key.kv_plan = r.Text();
  key.pos_shift = r.Value<uint8_t>() != 0;
  key.has_logits = r.Value<uint8_t>() != 0;
  key.n_past = r.Value<int32_t>();
  key.tokens = r.Array<int32_t>();
  return key;
}

Result<TensorType> ReadType(Reader& r, const std::string& path) {
  const auto raw = r.Value<uint32_t>();
  if (!GetTensorTypeTraits(raw)) {
    return Status::Error(Refused(path, fmt::format("unknown K/V type {}", raw)));
  }
  return static_cast<TensorType>(raw);
}

}  // namespace

uint64_t ModelFingerprint(const Model& model) {
  const gguf::File& file = model.file();
  Fnv1a64 h;
  h.AddValue(static_cast<uint64_t>(file.file_size()));
  for (const gguf::TensorInfo& t : file.tensors()) {
    h.Add(t.name.data(), t.name.size());
    h.AddValue(static_cast<uint32_t>(t.type));
    for (const int64_t d : t.dims) h.AddValue(d);
    const size_t head = std::min(t.nbytes, kFingerprintSample);
    h.Add(t.data, head);
    h.Add(t.data + (t.nbytes - head), head);
  }
  return h.h;
}

Result<size_t> WriteStateFile(const std::string& path, uint64_t model_fingerprint,
                              std::span<const int32_t> tokens, const SequenceState& state) {
  const KvCacheState& c = state.cache;
  if (c.policy == nullptr) return Status::Error(path + ": a state without its policy");
  Writer w;
  w.out().append(kMagic, sizeof(kMagic));
  w.Value<uint32_t>(kStateFileVersion);
  w.Value<uint64_t>(model_fingerprint);
  w.Text(state.kv_plan);
  w.Value<uint8_t>(state.pos_shift ? 1 : 0);
  w.Value<uint8_t>(state.last_logits.empty() ? 0 : 1);
  w.Value<int32_t>(state.n_past);
  w.Array(tokens);
  w.Text(c.policy->name());
  w.Text(c.policy->SaveStateBytes());
  w.Array<int32_t>(c.layer_budget);
  w.Array<int32_t>(c.layer_window);
  w.Value<int32_t>(c.n_head_kv);
  w.Value<int32_t>(c.head_dim);
  w.Value<uint32_t>(static_cast<uint32_t>(c.types.k));
  w.Value<uint32_t>(static_cast<uint32_t>(c.types.v));
  w.Array<int32_t>(c.used);
  w.Array<int32_t>(c.newest_pos);
  w.Array<uint8_t>(c.k);
  w.Array<uint8_t>(c.v);
  w.Array<int32_t>(c.pos);
  w.Array<double>(c.scores);
  w.Array<float>(c.step_attention);
  w.Array<float>(state.last_logits);
  Fnv1a64 sum;
  sum.Add(w.out().data() + sizeof(kMagic), w.out().size() - sizeof(kMagic));
  w.Value<uint64_t>(sum.h);
  H2O_RETURN_IF_ERROR(WriteFileAtomically(path, w.out()));
  return w.out().size();
}

Result<StateFileKey> ReadStateFileKey(const std::string& path, uint64_t model_fingerprint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open the state file");
  // The key is the plan and the tokens: read the head, then as much as the
  // token count says.
  std::string bytes(kHeadBytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  H2O_RETURN_IF_ERROR(CheckHead(path, bytes, model_fingerprint));
  for (int part = 0; part < 2; ++part) {
    // First the plan's length and text with the flags and n_past; then
    // the token array.
    uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), sizeof(n));
    if (in.gcount() != sizeof(n)) return Status::Error(Refused(path, "truncated"));
    bytes.append(reinterpret_cast<const char*>(&n), sizeof(n));
    const uint64_t element = part == 0 ? 1 : sizeof(int32_t);
    const uint64_t tail = part == 0 ? 2 * sizeof(uint8_t) + sizeof(int32_t) : 0;
    constexpr uint64_t kMaxKeyBytes = uint64_t{1} << 32;
    if (n > kMaxKeyBytes / element) return Status::Error(Refused(path, "a corrupt key"));
    const size_t more = static_cast<size_t>(n * element + tail);
    const size_t at = bytes.size();
    bytes.resize(at + more);
    in.read(bytes.data() + at, static_cast<std::streamsize>(more));
    if (static_cast<size_t>(in.gcount()) != more) return Status::Error(Refused(path, "truncated"));
  }
  Reader r(std::string_view(bytes).substr(kHeadBytes));
  StateFileKey key = ReadKey(r);
  if (r.failed()) return Status::Error(Refused(path, "truncated"));
  return key;
}

Result<StoredState> ReadStateFile(const std::string& path, uint64_t model_fingerprint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open the state file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  H2O_RETURN_IF_ERROR(CheckHead(path, bytes, model_fingerprint));
  if (bytes.size() < kHeadBytes + sizeof(uint64_t)) return Status::Error(Refused(path, "truncated"));
  Fnv1a64 sum;
  sum.Add(bytes.data() + sizeof(kMagic), bytes.size() - sizeof(kMagic) - sizeof(uint64_t));
  uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, bytes.data() + bytes.size() - sizeof(uint64_t), sizeof(stored_sum));
  if (sum.h != stored_sum) {
    return Status::Error(Refused(path, "its checksum does not match (truncated or corrupt)"));
  }
  Reader r(std::string_view(bytes).substr(kHeadBytes, bytes.size() - kHeadBytes - sizeof(uint64_t)));
  StoredState out;
  out.file_bytes = bytes.size();
  StateFileKey key = ReadKey(r);
  out.tokens = std::move(key.tokens);
  SequenceState& s = out.state;
  s.kv_plan = std::move(key.kv_plan);
  s.pos_shift = key.pos_shift;
  s.n_past = key.n_past;
  const std::string policy_name = r.Text();
  const std::string policy_state = r.Text();
  KvCacheState& c = s.cache;
  c.layer_budget = r.Array<int32_t>();
  c.layer_window = r.Array<int32_t>();
  c.n_head_kv = r.Value<int32_t>();
  c.head_dim = r.Value<int32_t>();
  H2O_ASSIGN_OR_RETURN(c.types.k, ReadType(r, path));
  H2O_ASSIGN_OR_RETURN(c.types.v, ReadType(r, path));
  c.used = r.Array<int32_t>();
  c.newest_pos = r.Array<int32_t>();
  c.k = r.Array<uint8_t>();
  c.v = r.Array<uint8_t>();
  c.pos = r.Array<int32_t>();
  c.scores = r.Array<double>();
  c.step_attention = r.Array<float>();
  s.last_logits = r.Array<float>();
  if (r.failed() || r.left() != 0 || key.has_logits == s.last_logits.empty()) return Status::Error(Refused(path, "its fields do not add up"));
  if (s.n_past < 0 || s.n_past < static_cast<int32_t>(std::min<size_t>(
                                     out.tokens.size(), std::numeric_limits<int32_t>::max()))) {
    return Status::Error(Refused(path, "fewer positions than tokens"));
  }
  auto spec = ParseKvSpec(s.kv_plan);
  if (!spec.ok()) return Status::Error(Refused(path, "its KV plan: " + spec.status().message()));
  auto plan = ResolveKvSpec(*spec, std::nullopt);
  if (!plan.ok()) return Status::Error(Refused(path, "its KV plan: " + plan.status().message()));
  c.policy = MakePolicy(*plan, std::max(1, s.n_past));
  if (c.policy->name() != policy_name || !c.policy->LoadStateBytes(policy_state)) {
    return Status::Error(Refused(path, "its policy's state does not match its KV plan"));
  }
  return out;
}

}  // namespace h2o
