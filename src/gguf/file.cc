#include "gguf/file.h"

#include <functional>

#include "gguf/format.h"
#include "gguf/parser.h"

namespace h2o::gguf {
Result<std::unique_ptr<File>> File::Open(const std::string& path) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> mapping, MappedFile::Open(path));
  Result<internal::ParsedFile> parsed = internal::ParseFile(mapping->data(), mapping->size());
  if (!parsed.ok()) return parsed.status().WithContext(path);

  std::unique_ptr<File> file(new File());
  internal::ParsedFile& p = parsed.value();
  file->mapping_ = std::move(mapping);
  file->version_ = p.version;
  file->alignment_ = p.alignment;
  file->data_offset_ = p.data_offset;
  file->metadata_ = std::move(p.metadata);
  file->tensors_ = std::move(p.tensors);
  // The parser rejected duplicates, so every emplace inserts.
  for (size_t i = 0; i < file->metadata_.size(); ++i) {
    file->key_index_.emplace(file->metadata_[i].key, i);
  }
  for (size_t i = 0; i < file->tensors_.size(); ++i) {
    file->tensor_index_.emplace(file->tensors_[i].name, i);
  }
  return file;
}

const Value* File::Find(std::string_view key) const {
  auto it = key_index_.find(key);
  return it == key_index_.end() ? nullptr : &metadata_[it->second].value;
}

const TensorInfo* File::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

Status File::Error(std::string message) const { return Status::Error(path() + ": " + message); }

Status File::TypeError(std::string_view key, const Value& value, std::string_view expected) const {
  return Error("key " + Quote(key) + " has type " + value.TypeDescription() + ", expected " +
               std::string(expected));
}

Result<const Value*> File::Require(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return Error("missing required key " + Quote(key));
  return v;
}

Result<uint32_t> File::GetU32(std::string_view key) const {
  H2O_ASSIGN_OR_RETURN(const Value* v, Require(key));
  if (!v->is_integer()) return TypeError(key, *v, "uint32");
  std::optional<uint32_t> u = v->ToInteger<uint32_t>();
  if (!u) return Error("key " + Quote(key) + " value " + FormatValue(*v) + " does not fit uint32");
  return *u;
}

Result<uint32_t> File::GetU32Or(std::string_view key, uint32_t fallback) const {
  if (Find(key) == nullptr) return fallback;
  return GetU32(key);
}

Result<float> File::GetF32(std::string_view key) const {
  H2O_ASSIGN_OR_RETURN(const Value* v, Require(key));
  std::optional<double> f = v->ToFloat();
  if (!f) return TypeError(key, *v, "float32");
  return static_cast<float>(*f);
}

Result<float> File::GetF32Or(std::string_view key, float fallback) const {
  if (Find(key) == nullptr) return fallback;
  return GetF32(key);
}

Result<bool> File::GetBoolOr(std::string_view key, bool fallback) const {
  const Value* v = Find(key);
  if (v == nullptr) return fallback;
  const bool* b = v->get_if<bool>();
  if (b == nullptr) return TypeError(key, *v, "bool");
  return *b;
}

Result<std::string> File::GetString(std::string_view key) const {
  H2O_ASSIGN_OR_RETURN(const Value* v, Require(key));
  const std::string* s = v->string();
  if (s == nullptr) return TypeError(key, *v, "string");
  return *s;
}

Result<std::vector<std::string>> File::GetStringArray(std::string_view key) const {
  H2O_ASSIGN_OR_RETURN(const Value* v, Require(key));
  const ArrayValue* a = v->array();
  if (a == nullptr || a->elem_type != ValueType::kString) {
    return TypeError(key, *v, "array<string>");
  }
  std::vector<std::string> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) out.push_back(*item.string());
  return out;
}

Result<std::vector<float>> File::GetF32Array(std::string_view key) const {
  H2O_ASSIGN_OR_RETURN(const Value* v, Require(key));
  const ArrayValue* a = v->array();
  if (a == nullptr ||
      (a->elem_type != ValueType::kFloat32 && a->elem_type != ValueType::kFloat64)) {
    return TypeError(key, *v, "array<float32>");
  }
  std::vector<float> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) out.push_back(static_cast<float>(*item.ToFloat()));
  return out;
}

Result<std::vector<int32_t>> File::GetI32Array(std::string_view key) const {
  H2O_ASSIGN_OR_RETURN(const Value* v, Require(key));
  const ArrayValue* a = v->array();
  if (a == nullptr || a->elem_type == ValueType::kArray || a->elem_type == ValueType::kString ||
      a->elem_type == ValueType::kBool || a->elem_type == ValueType::kFloat32 ||
      a->elem_type == ValueType::kFloat64) {
    return TypeError(key, *v, "array<int32>");
  }
  std::vector<int32_t> out;
  out.reserve(a->items.size());
  for (size_t i = 0; i < a->items.size(); ++i) {
    std::optional<int32_t> x = a->items[i].ToInteger<int32_t>();
    if (!x) {
      return Error("key " + Quote(key) + " item " + std::to_string(i) + " value " +
                   FormatValue(a->items[i]) + " does not fit int32");
    }
    out.push_back(*x);
  }
  return out;
}

}  // namespace h2o::gguf
