#include "core/tensor_type.h"

#include "core/status.h"

namespace h2o {

std::optional<TensorTypeTraits> GetTensorTypeTraits(uint32_t raw_type) {
  switch (static_cast<TensorType>(raw_type)) {
    case TensorType::kF32: return TensorTypeTraits{"f32", 1, 4};
    case TensorType::kF16: return TensorTypeTraits{"f16", 1, 2};
    case TensorType::kBF16: return TensorTypeTraits{"bf16", 1, 2};
    case TensorType::kQ8_0: return TensorTypeTraits{"q8_0", kQ8_0BlockSize, 2 + kQ8_0BlockSize};
    case TensorType::kQ4_0: return TensorTypeTraits{"q4_0", kQ4_0BlockSize, 2 + kQ4_0BlockSize / 2};
  }
  return std::nullopt;
}

TensorTypeTraits TraitsOf(TensorType type) {
  auto traits = GetTensorTypeTraits(static_cast<uint32_t>(type));
  H2O_CHECK(traits.has_value());
  return *traits;
}

size_t RowBytes(TensorType type, int64_t n) {
  const TensorTypeTraits t = TraitsOf(type);
  H2O_CHECK(n % t.block_size == 0);
  return static_cast<size_t>(n / t.block_size) * t.block_bytes;
}

std::optional<TensorType> ParseTensorType(std::string_view name) {
  for (TensorType t : {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0,
                       TensorType::kQ4_0}) {
    if (TraitsOf(t).name == name) return t;
  }
  return std::nullopt;
}

}  // namespace h2o
