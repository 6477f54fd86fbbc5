#include "kv/kv_types.h"

#include <fmt/format.h>

#include "kernels/dispatch.h"

namespace h2o {
namespace {

std::string KvRowTypeNames() {
  std::string names;
  for (TensorType t : kernels::KvRowTypes()) {
    if (!names.empty()) names += ", ";
    names += TraitsOf(t).name;
  }
  return names;
}

Status CheckOne(const char* which, TensorType type, int32_t head_dim) {
  if (!kernels::IsKvRowType(type)) {
    return Status::Error(fmt::format("{} cache type {} is not supported (valid: {})",
                                               which, TraitsOf(type).name, KvRowTypeNames()));
  }
  const int64_t block = TraitsOf(type).block_size;
  if (head_dim % block != 0) {
    return Status::Error(fmt::format(
        "{} cache type {} needs heads whose size is a multiple of {}; this model's heads have {} "
        "(use f16, bf16 or f32)",
        which, TraitsOf(type).name, block, head_dim));
  }
  return Status::Ok();
}

}  // namespace

std::string KvTypes::Name() const {
  if (k == v) return std::string(TraitsOf(k).name);
  return fmt::format("K {}, V {}", TraitsOf(k).name, TraitsOf(v).name);
}

size_t KvTypes::TokenBytes(int32_t head_dim) const {
  return RowBytes(k, head_dim) + RowBytes(v, head_dim);
}

Result<TensorType> ParseKvRowType(std::string_view name) {
  const std::optional<TensorType> type = ParseTensorType(name);
  if (!type || !kernels::IsKvRowType(*type)) {
    return Status::Error(
        fmt::format("unknown KV cache type '{}' (valid: {})", name, KvRowTypeNames()));
  }
  return *type;
}

Status CheckKvTypes(const KvTypes& types, int32_t head_dim) {
  H2O_RETURN_IF_ERROR(CheckOne("K", types.k, head_dim));
  return CheckOne("V", types.v, head_dim);
}

}  // namespace h2o
