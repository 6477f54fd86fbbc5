// The element types of a KV cache's K and V rows, which may differ (K is
// the more sensitive to rounding: its error passes through the softmax).
// Each is one of kernels::KvRowTypes(): f32, f16, bf16, or a 32-element
// block type (q8_0, q4_0, q4_1, q5_0, q5_1), whose rows are quantized once
// when appended and read as stored by the attention kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tensor_type.h"

namespace h2o {

struct KvTypes {
  TensorType k = TensorType::kF16;
  TensorType v = TensorType::kF16;

  bool operator==(const KvTypes&) const = default;
  // "q8_0" when K and V agree, else "K q8_0, V f16".
  std::string Name() const;
  // Bytes of one token's K and V rows for one (layer, KV head).
  size_t TokenBytes(int32_t head_dim) const;
};

// The KV row type named `name` ("q8_0"); the error lists the valid names.
Result<TensorType> ParseKvRowType(std::string_view name);

// Whether K and V rows of these types can be stored for heads of head_dim:
// both are KV row types, and a block type's 32 divides head_dim. A block
// covers 32 elements of one head's row and heads are kept and evicted
// apart, so a narrower head would need padded blocks, which are larger
// than its f16 row; we refuse it, as llama.cpp does.
Status CheckKvTypes(const KvTypes& types, int32_t head_dim);

}  // namespace h2o
