#include "core/tensor_type.h"

#include <array>

namespace h2o {
namespace {

// One row per GGML id; block sizes and bytes are ggml-common.h's block
// structs (QK_K = 256). A row with block_size 0 is a retired id.
struct TypeRow {
  std::string_view name;
  int64_t block_size;
  size_t block_bytes;
  bool runnable;
};

constexpr int64_t kK = kQKSuperBlockSize;

constexpr std::array<TypeRow, 40> kTypes = {{
    {"f32", 1, 4, true},          // 0
    {"f16", 1, 2, true},          // 1
    {"q4_0", 32, 18, true},       // 2: d, 16 bytes of nibbles
    {"q4_1", 32, 20, true},       // 3: d, m, nibbles
    {"q4_2", 0, 0, false},        // 4: retired
    {"q4_3", 0, 0, false},        // 5: retired
    {"q5_0", 32, 22, true},       // 6: d, 4 bytes of high bits, nibbles
    {"q5_1", 32, 24, true},       // 7: d, m, high bits, nibbles
    {"q8_0", 32, 34, true},       // 8: d, 32 bytes
    {"q8_1", 32, 36, false},      // 9: d, s, 32 bytes
    {"q2_K", kK, 84, true},       // 10: 16 scales, 64 qs, d, dmin
    {"q3_K", kK, 110, true},      // 11: 32 hmask, 64 qs, 12 scales, d
    {"q4_K", kK, 144, true},      // 12: d, dmin, 12 scales, 128 qs
    {"q5_K", kK, 176, true},      // 13: d, dmin, 12 scales, 32 qh, 128 qs
    {"q6_K", kK, 210, true},      // 14: 128 ql, 64 qh, 16 scales, d
    {"q8_K", kK, 292, false},     // 15: float d, 256 qs, 16 int16 sums
    {"iq2_xxs", kK, 66, false},   // 16: d, 32 uint16
    {"iq2_xs", kK, 74, false},    // 17: d, 32 uint16, 8 scales
    {"iq3_xxs", kK, 98, false},   // 18: d, 96 bytes
    {"iq1_s", kK, 50, false},     // 19: d, 32 qs, 8 uint16 qh
    {"iq4_nl", 32, 18, false},    // 20: d, 16 bytes
    {"iq3_s", kK, 110, false},    // 21: d, 64 qs, 8 qh, 32 signs, 4 scales
    {"iq2_s", kK, 82, false},     // 22: d, 64 qs, 8 qh, 8 scales
    {"iq4_xs", kK, 136, false},   // 23: d, scales_h, 4 scales_l, 128 qs
    {"i8", 1, 1, false},          // 24
    {"i16", 1, 2, false},         // 25
    {"i32", 1, 4, false},         // 26
    {"i64", 1, 8, false},         // 27
    {"f64", 1, 8, false},         // 28
    {"iq1_m", kK, 56, false},     // 29: 32 qs, 16 qh, 8 scales
    {"bf16", 1, 2, true},         // 30
    {"q4_0_4_4", 0, 0, false},    // 31: retired (runtime repacking)
    {"q4_0_4_8", 0, 0, false},    // 32: retired
    {"q4_0_8_8", 0, 0, false},    // 33: retired
    {"tq1_0", kK, 54, false},     // 34: 48 qs, 4 qh, d
    {"tq2_0", kK, 66, false},     // 35: 64 qs, d
    {"iq4_nl_4_4", 0, 0, false},  // 36: retired
    {"iq4_nl_4_8", 0, 0, false},  // 37: retired
    {"iq4_nl_8_8", 0, 0, false},  // 38: retired
    {"mxfp4", 32, 17, false},     // 39: e8m0 exponent, 16 bytes
}};

// Floats first (what users pick most), then the quantized types by id.
constexpr std::array kRunnable = {
    TensorType::kF32,  TensorType::kF16,  TensorType::kBF16, TensorType::kQ4_0, TensorType::kQ4_1,
    TensorType::kQ5_0, TensorType::kQ5_1, TensorType::kQ8_0, TensorType::kQ2_K, TensorType::kQ3_K,
    TensorType::kQ4_K, TensorType::kQ5_K, TensorType::kQ6_K};

constexpr bool RunnableListMatchesTable() {
  size_t runnable_rows = 0;
  for (const TypeRow& row : kTypes) runnable_rows += row.runnable ? 1 : 0;
  if (runnable_rows != kRunnable.size()) return false;
  for (TensorType t : kRunnable) {
    if (!kTypes[static_cast<uint32_t>(t)].runnable) return false;
  }
  return true;
}
static_assert(RunnableListMatchesTable());

}  // namespace

std::optional<TensorTypeTraits> GetTensorTypeTraits(uint32_t raw_type) {
  if (raw_type >= kTypes.size() || kTypes[raw_type].block_size == 0) return std::nullopt;
  const TypeRow& row = kTypes[raw_type];
  return TensorTypeTraits{row.name, row.block_size, row.block_bytes, row.runnable};
}

TensorTypeTraits TraitsOf(TensorType type) {
  auto traits = GetTensorTypeTraits(static_cast<uint32_t>(type));
  H2O_CHECK(traits.has_value());
  return *traits;
}

std::string_view GgmlTypeName(uint32_t raw_type) {
  return raw_type < kTypes.size() ? kTypes[raw_type].name : std::string_view();
}

size_t RowBytes(TensorType type, int64_t n) {
  const TensorTypeTraits t = TraitsOf(type);
  H2O_CHECK(n % t.block_size == 0);
  return static_cast<size_t>(n / t.block_size) * t.block_bytes;
}

bool IsRunnable(TensorType type) {
  const auto traits = GetTensorTypeTraits(static_cast<uint32_t>(type));
  return traits.has_value() && traits->runnable;
}

std::span<const TensorType> RunnableTypes() { return kRunnable; }

std::string RunnableTypeNames() {
  std::string names;
  for (TensorType t : kRunnable) {
    if (!names.empty()) names += ", ";
    names += TraitsOf(t).name;
  }
  return names;
}

Status CheckRunnable(std::string_view tensor_name, TensorType type) {
  if (IsRunnable(type)) return Status::Ok();
  return Status::Error("tensor '" + std::string(tensor_name) + "' has type " +
                       std::string(TraitsOf(type).name) +
                       ", which h2o cannot run (runs: " + RunnableTypeNames() + ")");
}

std::optional<TensorType> ParseTensorType(std::string_view name) {
  for (TensorType t : kRunnable) {
    if (TraitsOf(t).name == name) return t;
  }
  return std::nullopt;
}

}  // namespace h2o
