// Builds a GGUF v3 file: key/values in insertion order, then tensor infos and
// data in insertion order, each tensor's data padded to the alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor_type.h"
#include "gguf/value.h"

namespace h2o::gguf {

// Not thread-safe while being built; Write() is const and may run while no
// other thread mutates the Writer.
class Writer {
 public:
  // Adds a key/value; an existing key keeps its position and gets the new value.
  void Set(std::string key, Value value);
  void SetU32(std::string key, uint32_t v) { Set(std::move(key), Value::U32(v)); }
  void SetI32(std::string key, int32_t v) { Set(std::move(key), Value::I32(v)); }
  void SetF32(std::string key, float v) { Set(std::move(key), Value::F32(v)); }
  void SetBool(std::string key, bool v) { Set(std::move(key), Value::Bool(v)); }
  void SetString(std::string key, std::string v) { Set(std::move(key), Value::Str(std::move(v))); }
  void SetStringArray(std::string key, std::vector<std::string> v) {
    Set(std::move(key), Value::StrArray(std::move(v)));
  }
  void SetF32Array(std::string key, const std::vector<float>& v) {
    Set(std::move(key), Value::F32Array(v));
  }
  void SetI32Array(std::string key, const std::vector<int32_t>& v) {
    Set(std::move(key), Value::I32Array(v));
  }

  // Copies `nbytes` bytes from `data`. Errors: duplicate name, unsupported
  // type, 0 or more than 4 dims, a dim <= 0, dims[0] not a multiple of the
  // type's block size, or nbytes != RowBytes(type, dims[0]) * (product of
  // the other dims).
  Status AddTensor(std::string name, TensorType type, std::vector<int64_t> dims, const void* data,
                   size_t nbytes);

  // Adds a tensor whose data is produced during Write(): `fill` gets a
  // buffer of exactly the shape's byte size and must write all of it. Only
  // one such buffer exists at a time, so a file far larger than memory can
  // be written. `fill` runs once per Write() call, on the calling thread,
  // and must produce the same bytes each time. Errors as AddTensor's
  // (except the byte count, which the shape determines).
  Status AddTensorLazy(std::string name, TensorType type, std::vector<int64_t> dims,
                       std::function<void(void* dst)> fill);

  // Writes the file to "path.tmp", then renames it to `path`, so a failure
  // never leaves a partial file at `path` (nor the .tmp file). Uses
  // general.alignment when set (it must be an integer power of two),
  // otherwise 32. Errors are one line beginning with "path: ".
  Status Write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    TensorType type;
    std::vector<int64_t> dims;
    uint64_t nbytes = 0;
    std::vector<uint8_t> data;              // empty when `fill` is set
    std::function<void(void* dst)> fill;  // lazy tensors only
  };

  // Checks name, type and dims as AddTensor documents; returns the bytes the
  // shape needs.
  Result<uint64_t> CheckTensor(const std::string& name, TensorType type,
                               const std::vector<int64_t>& dims) const;

  std::vector<KeyValue> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace h2o::gguf
