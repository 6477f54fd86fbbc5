// A GGUF file opened read-only: its metadata, and tensors whose data stays
// in a memory mapping of the file (nothing is copied).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/status.h"
#include "gguf/tensor_info.h"
#include "gguf/value.h"

namespace h2o::gguf {

// Immutable after Open: every method is const and safe to call from several
// threads at once. Tensor data pointers stay valid while the File lives.
class File {
 public:
  // Maps and validates the whole file: header, every key/value, every tensor
  // info (shape, supported type, alignment) and that each tensor's bytes lie
  // inside the file. On failure returns one line beginning with "path: ".
  // Reads GGUF versions 2 and 3.
  static Result<std::unique_ptr<File>> Open(const std::string& path);

  const std::string& path() const { return mapping_->path(); }
  uint32_t version() const { return version_; }
  size_t file_size() const { return mapping_->size(); }
  uint32_t alignment() const { return alignment_; }      // general.alignment, default 32
  uint64_t data_offset() const { return data_offset_; }  // start of the data section

  const std::vector<KeyValue>& metadata() const { return metadata_; }  // file order
  const Value* Find(std::string_view key) const;                       // nullptr if absent

  // Typed getters. Errors are one line beginning with "path: ":
  //   missing key  -> "missing required key 'K'"
  //   wrong type   -> "key 'K' has type T, expected U"
  //   out of range -> "key 'K' value V does not fit U"
  // Integers of any width or signedness convert when the value fits; float
  // getters accept float32 and float64; GetBoolOr accepts only bool.
  Result<uint32_t> GetU32(std::string_view key) const;
  Result<uint32_t> GetU32Or(std::string_view key, uint32_t fallback) const;  // absent -> fallback
  Result<float> GetF32(std::string_view key) const;
  Result<float> GetF32Or(std::string_view key, float fallback) const;
  Result<bool> GetBoolOr(std::string_view key, bool fallback) const;
  Result<std::string> GetString(std::string_view key) const;
  // Arrays: the element type must match (GetI32Array accepts any integer
  // elements that fit int32; GetF32Array accepts float32 or float64).
  Result<std::vector<std::string>> GetStringArray(std::string_view key) const;
  Result<std::vector<float>> GetF32Array(std::string_view key) const;
  Result<std::vector<int32_t>> GetI32Array(std::string_view key) const;

  // MappedFile::ReleasePages for bytes of this file's mapping.
  void ReleasePages(const void* p, size_t n) const { mapping_->ReleasePages(p, n); }

  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // file order
  const TensorInfo* FindTensor(std::string_view name) const;           // nullptr if absent

 private:
  File() = default;

  Result<const Value*> Require(std::string_view key) const;
  Status Error(std::string message) const;
  Status TypeError(std::string_view key, const Value& value, std::string_view expected) const;

  std::unique_ptr<MappedFile> mapping_;
  uint32_t version_ = 0;
  uint32_t alignment_ = 0;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> key_index_;     // key -> metadata_ index
  std::map<std::string, size_t, std::less<>> tensor_index_;  // name -> tensors_ index
};

}  // namespace h2o::gguf
