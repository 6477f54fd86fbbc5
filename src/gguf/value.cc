#include "gguf/value.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/status.h"

namespace h2o::gguf {

std::string_view ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kUint8:
      return "uint8";
    case ValueType::kInt8:
      return "int8";
    case ValueType::kUint16:
      return "uint16";
    case ValueType::kInt16:
      return "int16";
    case ValueType::kUint32:
      return "uint32";
    case ValueType::kInt32:
      return "int32";
    case ValueType::kFloat32:
      return "float32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "uint64";
    case ValueType::kInt64:
      return "int64";
    case ValueType::kFloat64:
      return "float64";
  }
  return "unknown";
}

Value Value::Array(ValueType elem_type, std::vector<Value> items) {
  for (const Value& item : items) H2O_CHECK(item.type() == elem_type);
  return Value{Storage(std::in_place_index<9>, ArrayValue{elem_type, std::move(items)})};
}

Value Value::StrArray(std::vector<std::string> items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (std::string& s : items) values.push_back(Str(std::move(s)));
  return Array(ValueType::kString, std::move(values));
}

Value Value::F32Array(const std::vector<float>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (float f : items) values.push_back(F32(f));
  return Array(ValueType::kFloat32, std::move(values));
}

Value Value::I32Array(const std::vector<int32_t>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (int32_t i : items) values.push_back(I32(i));
  return Array(ValueType::kInt32, std::move(values));
}

bool Value::is_integer() const {
  switch (type()) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kUint16:
    case ValueType::kInt16:
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kUint64:
    case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

std::optional<double> Value::ToFloat() const {
  if (const float* f = get_if<float>()) return *f;
  if (const double* d = get_if<double>()) return *d;
  return std::nullopt;
}

std::string Value::TypeDescription() const {
  std::string out(ValueTypeName(type()));
  if (const ArrayValue* a = array()) {
    out += "<";
    out += ValueTypeName(a->elem_type);
    out += ">";
  }
  return out;
}

bool operator==(const ArrayValue& a, const ArrayValue& b) {
  return a.elem_type == b.elem_type && a.items == b.items;
}

bool operator==(const Value& a, const Value& b) { return a.storage == b.storage; }

namespace {

template <typename F>
std::string ShortestFloat(F f) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), f);
  H2O_CHECK(ec == std::errc());
  return std::string(buf, end);
}

void AppendQuoted(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        // Bytes >= 0x80 pass through so UTF-8 text stays readable.
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void AppendValue(const Value& value, size_t max_items, std::string& out) {
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) {
          out += x ? "true" : "false";
        } else if constexpr (std::is_same_v<X, float> || std::is_same_v<X, double>) {
          out += ShortestFloat(x);
        } else if constexpr (std::is_integral_v<X>) {
          out += std::to_string(x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          AppendQuoted(x, out);
        } else {
          static_assert(std::is_same_v<X, ArrayValue>);
          out += '[';
          const size_t shown = std::min(x.items.size(), max_items);
          for (size_t i = 0; i < shown; ++i) {
            if (i > 0) out += ", ";
            AppendValue(x.items[i], max_items, out);
          }
          if (shown < x.items.size()) {
            out += shown > 0 ? ", ... (" : "... (";
            out += std::to_string(x.items.size());
            out += " items)";
          }
          out += ']';
        }
      },
      value.storage);
}

}  // namespace

std::string FormatValue(const Value& value, size_t max_array_items) {
  std::string out;
  AppendValue(value, max_array_items, out);
  return out;
}

}  // namespace h2o::gguf
