// Decoding order follows the file: header, key/values, tensor infos, then the
// data section. Invariant of ByteReader: pos_ <= size_; each read first checks
// that the bytes it needs lie before size_, and a count is compared with the
// bytes left (count * smallest encoding of one item) before anything is
// reserved, so a hostile count can neither overrun nor exhaust memory.
#include "gguf/parser.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gguf/format.h"

namespace h2o::gguf::internal {
namespace {

static_assert(std::endian::native == std::endian::little,
              "GGUF is little-endian; this reader copies bytes as they are");

// Arrays of arrays are legal but no real file nests deeply; the limit keeps
// recursion bounded on hostile input.
constexpr int kMaxArrayDepth = 8;

// The fewest bytes one value of `type` can occupy in the file.
uint64_t MinEncodedSize(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
    case ValueType::kString:
      return 8;  // the length
    case ValueType::kArray:
      return 12;  // element type + count
  }
  return 1;
}

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  size_t size() const { return size_; }

  template <typename T>
  Status Read(T* out, std::string_view what) {
    if (sizeof(T) > remaining()) {
      return Status::Error("unexpected end of file reading " + std::string(what) + " at offset " +
                           std::to_string(pos_) + " (file size " + std::to_string(size_) + ")");
    }
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }

  // A GGUF string: uint64 length, then that many bytes (not NUL-terminated).
  // The view points into the file.
  Status ReadStringView(std::string_view* out, std::string_view what) {
    const size_t start = pos_;
    uint64_t len = 0;
    H2O_RETURN_IF_ERROR(Read(&len, std::string(what) + " length"));
    if (len > remaining()) {
      return Status::Error(std::string(what) + " of length " + std::to_string(len) + " at offset " +
                           std::to_string(start) + " runs past end of file (file size " +
                           std::to_string(size_) + ")");
    }
    *out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return Status::Ok();
  }

  Status ReadValueType(ValueType* out, std::string_view what) {
    uint32_t raw = 0;
    H2O_RETURN_IF_ERROR(Read(&raw, what));
    if (raw >= kNumValueTypes) {
      return Status::Error("unknown value type " + std::to_string(raw) + " at offset " +
                           std::to_string(pos_ - sizeof(raw)));
    }
    *out = static_cast<ValueType>(raw);
    return Status::Ok();
  }

  template <typename T>
  Status ReadScalar(Value* out) {
    T v{};
    H2O_RETURN_IF_ERROR(Read(&v, "value"));
    out->storage.emplace<T>(v);
    return Status::Ok();
  }

  Status ReadValue(ValueType type, int depth, Value* out) {
    switch (type) {
      case ValueType::kUint8:
        return ReadScalar<uint8_t>(out);
      case ValueType::kInt8:
        return ReadScalar<int8_t>(out);
      case ValueType::kUint16:
        return ReadScalar<uint16_t>(out);
      case ValueType::kInt16:
        return ReadScalar<int16_t>(out);
      case ValueType::kUint32:
        return ReadScalar<uint32_t>(out);
      case ValueType::kInt32:
        return ReadScalar<int32_t>(out);
      case ValueType::kFloat32:
        return ReadScalar<float>(out);
      case ValueType::kUint64:
        return ReadScalar<uint64_t>(out);
      case ValueType::kInt64:
        return ReadScalar<int64_t>(out);
      case ValueType::kFloat64:
        return ReadScalar<double>(out);
      case ValueType::kBool: {
        uint8_t b = 0;
        H2O_RETURN_IF_ERROR(Read(&b, "value"));
        if (b > 1) {
          return Status::Error("bool value " + std::to_string(b) + " at offset " +
                               std::to_string(pos_ - 1) + " is neither 0 nor 1");
        }
        *out = Value::Bool(b != 0);
        return Status::Ok();
      }
      case ValueType::kString: {
        std::string_view s;
        H2O_RETURN_IF_ERROR(ReadStringView(&s, "string"));
        *out = Value::Str(std::string(s));
        return Status::Ok();
      }
      case ValueType::kArray:
        return ReadArray(depth, out);
    }
    return Status::Error("unknown value type");  // unreachable: types are validated when read
  }

  Status ReadArray(int depth, Value* out) {
    const size_t start = pos_;
    if (depth >= kMaxArrayDepth) {
      return Status::Error("arrays nested more than " + std::to_string(kMaxArrayDepth) +
                           " deep at offset " + std::to_string(start));
    }
    ValueType elem_type = ValueType::kUint8;
    H2O_RETURN_IF_ERROR(ReadValueType(&elem_type, "array element type"));
    uint64_t count = 0;
    H2O_RETURN_IF_ERROR(Read(&count, "array length"));
    if (count > remaining() / MinEncodedSize(elem_type)) {
      return Status::Error("array of " + std::to_string(count) + " " +
                           std::string(ValueTypeName(elem_type)) + " items at offset " +
                           std::to_string(start) + " runs past end of file (file size " +
                           std::to_string(size_) + ")");
    }
    ArrayValue array{elem_type, {}};
    array.items.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      Status s = ReadValue(elem_type, depth + 1, &array.items[i]);
      if (!s.ok()) return s.WithContext("array item " + std::to_string(i));
    }
    out->storage = std::move(array);
    return Status::Ok();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

Status ReadHeader(ByteReader& r, ParsedFile& file, uint64_t* n_tensors, uint64_t* n_kv) {
  constexpr size_t kHeaderSize = 4 + 4 + 8 + 8;
  char magic[4] = {};
  if (r.size() >= sizeof(magic)) H2O_RETURN_IF_ERROR(r.Read(&magic, "magic"));
  if (r.size() < sizeof(magic) || std::memcmp(magic, kMagic, sizeof(magic)) != 0) {
    if (r.size() < kHeaderSize) {
      return Status::Error("file too short to be GGUF (" + std::to_string(r.size()) +
                           " bytes, a header needs " + std::to_string(kHeaderSize) + ")");
    }
    char hex[32];
    std::snprintf(hex, sizeof(hex), "%02x %02x %02x %02x", static_cast<uint8_t>(magic[0]),
                  static_cast<uint8_t>(magic[1]), static_cast<uint8_t>(magic[2]),
                  static_cast<uint8_t>(magic[3]));
    return Status::Error(std::string("not a GGUF file (bad magic ") + hex +
                         ", expected 47 47 55 46 'GGUF')");
  }
  if (r.size() < kHeaderSize) {
    return Status::Error("file too short for a GGUF header (" + std::to_string(r.size()) +
                         " bytes, need " + std::to_string(kHeaderSize) + ")");
  }
  H2O_RETURN_IF_ERROR(r.Read(&file.version, "version"));
  if (file.version < kMinVersion || file.version > kMaxVersion) {
    std::string msg = "unsupported GGUF version " + std::to_string(file.version) +
                      " (this engine reads versions 2 and 3)";
    const uint32_t swapped = __builtin_bswap32(file.version);
    if (swapped >= kMinVersion && swapped <= kMaxVersion)
      msg += "; big-endian GGUF files are not supported";
    return Status::Error(msg);
  }
  H2O_RETURN_IF_ERROR(r.Read(n_tensors, "tensor count"));
  H2O_RETURN_IF_ERROR(r.Read(n_kv, "key/value count"));
  // Smallest encodings: key/value = key length + type + 1 byte; tensor info =
  // name length + n_dims + one dim + type + offset.
  constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
  constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;
  const uint64_t left = r.remaining();
  if (*n_kv > left / kMinKvBytes ||
      *n_tensors > (left - *n_kv * kMinKvBytes) / kMinTensorInfoBytes) {
    return Status::Error("header claims " + std::to_string(*n_kv) + " key/values and " +
                         std::to_string(*n_tensors) + " tensors, more than a file of " +
                         std::to_string(r.size()) + " bytes can hold");
  }
  return Status::Ok();
}

Status ReadMetadata(ByteReader& r, uint64_t n_kv, ParsedFile& file) {
  std::unordered_set<std::string_view> seen;  // views into the mapping
  file.metadata.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string_view key;
    H2O_RETURN_IF_ERROR(r.ReadStringView(&key, "key #" + std::to_string(i)));
    if (!seen.insert(key).second) return Status::Error("duplicate key " + Quote(key));
    ValueType type = ValueType::kUint8;
    Value value;
    Status s = r.ReadValueType(&type, "value type");
    if (s.ok()) s = r.ReadValue(type, 0, &value);
    if (!s.ok()) return s.WithContext("key " + Quote(key));
    file.metadata.push_back(KeyValue{std::string(key), std::move(value)});
  }
  return Status::Ok();
}

Status ResolveAlignment(ParsedFile& file) {
  file.alignment = kDefaultAlignment;
  for (const KeyValue& kv : file.metadata) {
    if (kv.key != kAlignmentKey) continue;
    std::optional<uint32_t> a = kv.value.ToInteger<uint32_t>();
    if (!kv.value.is_integer()) {
      return Status::Error(std::string(kAlignmentKey) + " has type " + kv.value.TypeDescription() +
                           ", expected uint32");
    }
    if (!a || !IsPowerOfTwo(*a)) {
      return Status::Error(std::string(kAlignmentKey) + " is " + FormatValue(kv.value) +
                           ", not a power of two that fits uint32");
    }
    file.alignment = *a;
  }
  return Status::Ok();
}

Status ReadTensorInfo(ByteReader& r, uint64_t index, const ParsedFile& file, TensorInfo& t) {
  std::string_view name;
  H2O_RETURN_IF_ERROR(r.ReadStringView(&name, "tensor #" + std::to_string(index) + " name"));
  t.name = std::string(name);
  const std::string where = "tensor " + Quote(name);
  uint32_t n_dims = 0;
  Status s = r.Read(&n_dims, "dimension count");
  if (!s.ok()) return s.WithContext(where);
  if (n_dims == 0 || n_dims > kMaxDims) {
    return Status::Error(where + " has " + std::to_string(n_dims) + " dimensions (must be 1 to " +
                         std::to_string(kMaxDims) + ")");
  }
  t.dims.resize(n_dims);
  int64_t n_elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    s = r.Read(&t.dims[d], "dimension");
    if (!s.ok()) return s.WithContext(where);
    if (t.dims[d] <= 0) {
      return Status::Error(where + " dimension " + std::to_string(d) + " is " +
                           std::to_string(t.dims[d]) + " (must be positive)");
    }
    if (__builtin_mul_overflow(n_elements, t.dims[d], &n_elements)) {
      return Status::Error(where + " element count overflows (dims too large)");
    }
  }
  uint32_t raw_type = 0;
  s = r.Read(&raw_type, "type");
  if (s.ok()) s = r.Read(&t.offset, "offset");
  if (!s.ok()) return s.WithContext(where);

  // Any type GGML defines is accepted (sized with its own block bytes);
  // whether h2o can run it is the model loader's question.
  const std::optional<TensorTypeTraits> traits = GetTensorTypeTraits(raw_type);
  if (!traits) {
    const std::string_view ggml_name = GgmlTypeName(raw_type);
    if (ggml_name.empty()) {
      return Status::Error(where + " has unknown type (GGML id " + std::to_string(raw_type) + ")");
    }
    return Status::Error(where + " has type " + std::string(ggml_name) + " (GGML id " +
                         std::to_string(raw_type) + "), which GGML has retired");
  }
  t.type = static_cast<TensorType>(raw_type);
  if (t.dims[0] % traits->block_size != 0) {
    return Status::Error(where + " row of " + std::to_string(t.dims[0]) +
                         " elements is not a multiple of the " + std::string(traits->name) +
                         " block size " + std::to_string(traits->block_size));
  }
  const uint64_t n_blocks = static_cast<uint64_t>(n_elements / traits->block_size);
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(n_blocks, static_cast<uint64_t>(traits->block_bytes), &nbytes) ||
      nbytes > std::numeric_limits<size_t>::max()) {
    return Status::Error(where + " byte size overflows (dims too large)");
  }
  t.nbytes = static_cast<size_t>(nbytes);
  if (t.offset % file.alignment != 0) {
    return Status::Error(where + " offset " + std::to_string(t.offset) +
                         " is not a multiple of the alignment " + std::to_string(file.alignment));
  }
  return Status::Ok();
}

Status ReadTensorInfos(ByteReader& r, uint64_t n_tensors, ParsedFile& file) {
  std::unordered_set<std::string_view> seen;  // views into the mapping
  file.tensors.resize(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo& t = file.tensors[i];
    H2O_RETURN_IF_ERROR(ReadTensorInfo(r, i, file, t));
    if (!seen.insert(t.name).second) return Status::Error("duplicate tensor name " + Quote(t.name));
  }
  return Status::Ok();
}

// Points each tensor at its bytes once the data section's start is known.
Status LocateTensorData(const uint8_t* data, size_t size, ParsedFile& file) {
  const uint64_t avail = size >= file.data_offset ? size - file.data_offset : 0;
  for (TensorInfo& t : file.tensors) {
    if (t.offset > avail || t.nbytes > avail - t.offset) {
      return Status::Error("tensor " + Quote(t.name) + " extends past end of file (offset " +
                           std::to_string(t.offset) + " in the data section at " +
                           std::to_string(file.data_offset) + ", size " + std::to_string(t.nbytes) +
                           ", file size " + std::to_string(size) + ")");
    }
    t.data = data + file.data_offset + t.offset;
  }
  // Two tensors sharing bytes would alias: writing one (a converter, a
  // cache) silently changes the other, and no writer produces it.
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(file.tensors.size());
  for (const TensorInfo& t : file.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& a = *by_offset[i - 1];
    const TensorInfo& b = *by_offset[i];
    if (b.offset < a.offset + a.nbytes) {
      return Status::Error("tensors " + Quote(a.name) + " (offset " + std::to_string(a.offset) +
                           ", size " + std::to_string(a.nbytes) + ") and " + Quote(b.name) +
                           " (offset " + std::to_string(b.offset) + ") overlap");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<ParsedFile> ParseFile(const uint8_t* data, size_t size) {
  ByteReader r(data, size);
  ParsedFile file;
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  H2O_RETURN_IF_ERROR(ReadHeader(r, file, &n_tensors, &n_kv));
  H2O_RETURN_IF_ERROR(ReadMetadata(r, n_kv, file));
  H2O_RETURN_IF_ERROR(ResolveAlignment(file));
  H2O_RETURN_IF_ERROR(ReadTensorInfos(r, n_tensors, file));
  file.data_offset = AlignUp(r.pos(), file.alignment);
  H2O_RETURN_IF_ERROR(LocateTensorData(data, size, file));
  return file;
}

}  // namespace h2o::gguf::internal
