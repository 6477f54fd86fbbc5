// GGUF metadata values: a scalar, a string, or a typed array of values.
// Values are plain immutable-after-construction data; sharing const Values
// across threads is safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace h2o::gguf {

// Numbered as in the GGUF format (the uint32 stored before each value).
enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
inline constexpr uint32_t kNumValueTypes = 13;

// "uint8", "int32", "float32", "bool", "string", "array", ...; "unknown" for
// a value outside the enum.
std::string_view ValueTypeName(ValueType type);

struct Value;

// An array keeps its element type even when empty. Every item has type
// elem_type (Value::Array enforces it); items of an array of arrays may
// have different element types, as the format allows.
struct ArrayValue {
  ValueType elem_type;
  std::vector<Value> items;
};

struct Value {
  // Alternatives are ordered so that storage.index() == the ValueType number.
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, ArrayValue, uint64_t, int64_t, double>;
  Storage storage;

  // Builders.
  static Value U8(uint8_t v) { return Value{Storage(std::in_place_index<0>, v)}; }
  static Value I8(int8_t v) { return Value{Storage(std::in_place_index<1>, v)}; }
  static Value U16(uint16_t v) { return Value{Storage(std::in_place_index<2>, v)}; }
  static Value I16(int16_t v) { return Value{Storage(std::in_place_index<3>, v)}; }
  static Value U32(uint32_t v) { return Value{Storage(std::in_place_index<4>, v)}; }
  static Value I32(int32_t v) { return Value{Storage(std::in_place_index<5>, v)}; }
  static Value F32(float v) { return Value{Storage(std::in_place_index<6>, v)}; }
  static Value Bool(bool v) { return Value{Storage(std::in_place_index<7>, v)}; }
  static Value Str(std::string v) { return Value{Storage(std::in_place_index<8>, std::move(v))}; }
  static Value U64(uint64_t v) { return Value{Storage(std::in_place_index<10>, v)}; }
  static Value I64(int64_t v) { return Value{Storage(std::in_place_index<11>, v)}; }
  static Value F64(double v) { return Value{Storage(std::in_place_index<12>, v)}; }
  // Every item must have type elem_type (checked: a mismatch is a bug).
  static Value Array(ValueType elem_type, std::vector<Value> items);
  static Value StrArray(std::vector<std::string> items);
  static Value F32Array(const std::vector<float>& items);
  static Value I32Array(const std::vector<int32_t>& items);

  ValueType type() const { return static_cast<ValueType>(storage.index()); }
  bool is_integer() const;  // any of the eight integer types (not bool)
  bool is_float() const { return type() == ValueType::kFloat32 || type() == ValueType::kFloat64; }

  // Typed access; nullptr when the value holds another type.
  template <typename T>
  const T* get_if() const {
    return std::get_if<T>(&storage);
  }
  const std::string* string() const { return get_if<std::string>(); }
  const ArrayValue* array() const { return get_if<ArrayValue>(); }

  // The integer converted to T when this is an integer of any width or
  // signedness and its value fits in T; nullopt otherwise.
  template <typename T>
  std::optional<T> ToInteger() const {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
    return std::visit(
        [](const auto& x) -> std::optional<T> {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_integral_v<X> && !std::is_same_v<X, bool>) {
            if (std::in_range<T>(x)) return static_cast<T>(x);
          }
          return std::nullopt;
        },
        storage);
  }
  // The number when this is float32 or float64; nullopt otherwise.
  std::optional<double> ToFloat() const;

  // Describes the type for messages: "uint32", "string", "array<string>".
  std::string TypeDescription() const;
};

bool operator==(const ArrayValue& a, const ArrayValue& b);
bool operator==(const Value& a, const Value& b);

struct KeyValue {
  std::string key;
  Value value;
};

// Renders a value for `h2o inspect`: integers and floats as numbers,
// booleans as true/false, strings quoted with C escapes for quotes,
// backslashes and non-printable bytes, arrays as "[1, 2, 3]" or, past
// max_array_items items, "[1, 2, 3, ... (512 items)]".
std::string FormatValue(const Value& value, size_t max_array_items = 8);

}  // namespace h2o::gguf
