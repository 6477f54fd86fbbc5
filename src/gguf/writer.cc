#include "gguf/writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gguf/format.h"

namespace h2o::gguf {
namespace {

// Appends the little-endian encoding of GGUF primitives to a byte buffer.
class Encoder {
 public:
  template <typename T>
  void Put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    PutBytes(&v, sizeof(T));
  }
  void PutBytes(const void* data, size_t n) {
    const size_t at = bytes_.size();
    bytes_.resize(at + n);
    if (n > 0) std::memcpy(bytes_.data() + at, data, n);
  }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    PutBytes(s.data(), s.size());
  }
  void PutValue(const Value& value) {
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, bool>) {
            Put<uint8_t>(x ? 1 : 0);
          } else if constexpr (std::is_same_v<X, std::string>) {
            PutString(x);
          } else if constexpr (std::is_same_v<X, ArrayValue>) {
            Put<uint32_t>(static_cast<uint32_t>(x.elem_type));
            Put<uint64_t>(x.items.size());
            for (const Value& item : x.items) PutValue(item);
          } else {
            Put<X>(x);
          }
        },
        value.storage);
  }
  void PadTo(uint64_t alignment) { bytes_.resize(AlignUp(bytes_.size(), alignment), 0); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// Owns a FILE* for the temporary file and removes that file unless Commit()
// succeeded, so every early return cleans up.
class TempFile {
 public:
  TempFile(std::string final_path)
      : final_path_(std::move(final_path)), tmp_path_(final_path_ + ".tmp") {}
  ~TempFile() {
    if (f_ != nullptr) std::fclose(f_);
    if (!committed_) std::remove(tmp_path_.c_str());
  }

  Status Open() {
    f_ = std::fopen(tmp_path_.c_str(), "wb");
    if (f_ == nullptr) return Errno("cannot create " + tmp_path_);
    return Status::Ok();
  }
  Status Write(const void* data, size_t n) {
    if (n > 0 && std::fwrite(data, 1, n, f_) != n) return Errno("cannot write " + tmp_path_);
    return Status::Ok();
  }
  Status Commit() {
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) return Errno("cannot write " + tmp_path_);
    if (std::rename(tmp_path_.c_str(), final_path_.c_str()) != 0) {
      return Errno("cannot rename " + tmp_path_);
    }
    committed_ = true;
    return Status::Ok();
  }

 private:
  Status Errno(const std::string& what) const {
    return Status::Error(final_path_ + ": " + what + " (" + std::strerror(errno) + ")");
  }

  std::string final_path_;
  std::string tmp_path_;
  std::FILE* f_ = nullptr;
  bool committed_ = false;
};

}  // namespace

void Writer::Set(std::string key, Value value) {
  for (KeyValue& kv : metadata_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  metadata_.push_back(KeyValue{std::move(key), std::move(value)});
}

Result<uint64_t> Writer::CheckTensor(const std::string& name, TensorType type,
                                     const std::vector<int64_t>& dims) const {
  const std::string where = "tensor '" + name + "'";
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) return Status::Error("duplicate " + where);
  }
  const std::optional<TensorTypeTraits> traits = GetTensorTypeTraits(static_cast<uint32_t>(type));
  if (!traits) {
    return Status::Error(where + ": unsupported type id " +
                         std::to_string(static_cast<uint32_t>(type)));
  }
  if (dims.empty() || dims.size() > kMaxDims) {
    return Status::Error(where + ": " + std::to_string(dims.size()) +
                         " dimensions (must be 1 to 4)");
  }
  uint64_t rows = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] <= 0) return Status::Error(where + ": dimension " + std::to_string(d) + " <= 0");
    if (d > 0 && __builtin_mul_overflow(rows, static_cast<uint64_t>(dims[d]), &rows)) {
      return Status::Error(where + ": too many elements");
    }
  }
  if (dims[0] % traits->block_size != 0) {
    return Status::Error(where + ": row of " + std::to_string(dims[0]) +
                         " elements is not a multiple of the block size " +
                         std::to_string(traits->block_size));
  }
  uint64_t expected = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(RowBytes(type, dims[0])), rows, &expected)) {
    return Status::Error(where + ": too many elements");
  }
  return expected;
}

Status Writer::AddTensor(std::string name, TensorType type, std::vector<int64_t> dims,
                         const void* data, size_t nbytes) {
  H2O_ASSIGN_OR_RETURN(const uint64_t expected, CheckTensor(name, type, dims));
  if (expected != nbytes) {
    return Status::Error("tensor '" + name + "': " + std::to_string(nbytes) +
                         " bytes given, shape needs " + std::to_string(expected));
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  tensors_.push_back(PendingTensor{std::move(name), type, std::move(dims), nbytes,
                                   std::vector<uint8_t>(bytes, bytes + nbytes), nullptr});
  return Status::Ok();
}

Status Writer::AddTensorLazy(std::string name, TensorType type, std::vector<int64_t> dims,
                             std::function<void(void* dst)> fill) {
  H2O_CHECK(fill != nullptr);
  H2O_ASSIGN_OR_RETURN(const uint64_t nbytes, CheckTensor(name, type, dims));
  tensors_.push_back(
      PendingTensor{std::move(name), type, std::move(dims), nbytes, {}, std::move(fill)});
  return Status::Ok();
}

Status Writer::Write(const std::string& path) const {
  uint64_t alignment = kDefaultAlignment;
  for (const KeyValue& kv : metadata_) {
    if (kv.key != kAlignmentKey) continue;
    std::optional<uint32_t> a = kv.value.ToInteger<uint32_t>();
    if (!a || !IsPowerOfTwo(*a)) {
      return Status::Error(path + ": " + std::string(kAlignmentKey) +
                           " must be a power of two, got " + FormatValue(kv.value));
    }
    alignment = *a;
  }

  Encoder header;
  header.PutBytes(kMagic, sizeof(kMagic));
  header.Put<uint32_t>(kWriteVersion);
  header.Put<uint64_t>(tensors_.size());
  header.Put<uint64_t>(metadata_.size());
  for (const KeyValue& kv : metadata_) {
    header.PutString(kv.key);
    header.Put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    header.PutValue(kv.value);
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    header.PutString(t.name);
    header.Put<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) header.Put<int64_t>(d);
    header.Put<uint32_t>(static_cast<uint32_t>(t.type));
    header.Put<uint64_t>(offset);
    offset = AlignUp(offset + t.nbytes, alignment);
  }
  header.PadTo(alignment);

  TempFile out(path);
  H2O_RETURN_IF_ERROR(out.Open());
  H2O_RETURN_IF_ERROR(out.Write(header.bytes().data(), header.bytes().size()));
  const std::vector<uint8_t> zeros(alignment, 0);
  for (const PendingTensor& t : tensors_) {
    const uint8_t* data = t.data.data();
    std::vector<uint8_t> lazy;  // a lazy tensor's bytes, freed after it is written
    if (t.fill) {
      lazy.resize(t.nbytes);
      t.fill(lazy.data());
      data = lazy.data();
    }
    H2O_RETURN_IF_ERROR(out.Write(data, t.nbytes));
    const size_t pad = AlignUp(t.nbytes, alignment) - t.nbytes;
    H2O_RETURN_IF_ERROR(out.Write(zeros.data(), pad));
  }
  return out.Commit();
}

}  // namespace h2o::gguf
