#include "gguf/value.h"

#include <gtest/gtest.h>

#include <limits>

namespace h2o::gguf {
namespace {

TEST(ValueTest, TypeMatchesFormatNumbering) {
  // The numbers are the ones GGUF stores before each value.
  EXPECT_EQ(static_cast<uint32_t>(Value::U8(1).type()), 0u);
  EXPECT_EQ(static_cast<uint32_t>(Value::I8(1).type()), 1u);
  EXPECT_EQ(static_cast<uint32_t>(Value::U16(1).type()), 2u);
  EXPECT_EQ(static_cast<uint32_t>(Value::I16(1).type()), 3u);
  EXPECT_EQ(static_cast<uint32_t>(Value::U32(1).type()), 4u);
  EXPECT_EQ(static_cast<uint32_t>(Value::I32(1).type()), 5u);
  EXPECT_EQ(static_cast<uint32_t>(Value::F32(1).type()), 6u);
  EXPECT_EQ(static_cast<uint32_t>(Value::Bool(true).type()), 7u);
  EXPECT_EQ(static_cast<uint32_t>(Value::Str("x").type()), 8u);
  EXPECT_EQ(static_cast<uint32_t>(Value::Array(ValueType::kUint8, {}).type()), 9u);
  EXPECT_EQ(static_cast<uint32_t>(Value::U64(1).type()), 10u);
  EXPECT_EQ(static_cast<uint32_t>(Value::I64(1).type()), 11u);
  EXPECT_EQ(static_cast<uint32_t>(Value::F64(1).type()), 12u);
}

TEST(ValueTest, Names) {
  EXPECT_EQ(ValueTypeName(ValueType::kUint32), "uint32");
  EXPECT_EQ(ValueTypeName(ValueType::kFloat64), "float64");
  EXPECT_EQ(ValueTypeName(ValueType::kString), "string");
  EXPECT_EQ(ValueTypeName(ValueType::kArray), "array");
  EXPECT_EQ(ValueTypeName(static_cast<ValueType>(13)), "unknown");
  EXPECT_EQ(Value::StrArray({"a"}).TypeDescription(), "array<string>");
  EXPECT_EQ(Value::I64(-1).TypeDescription(), "int64");
}

TEST(ValueTest, IntegerConversionOnlyWhenTheValueFits) {
  EXPECT_EQ(Value::U8(200).ToInteger<uint32_t>(), 200u);
  EXPECT_EQ(Value::I64(4294967295LL).ToInteger<uint32_t>(), 4294967295u);
  EXPECT_EQ(Value::I64(4294967296LL).ToInteger<uint32_t>(), std::nullopt);
  EXPECT_EQ(Value::I32(-1).ToInteger<uint32_t>(), std::nullopt);
  EXPECT_EQ(Value::U32(4294967295u).ToInteger<int32_t>(), std::nullopt);
  EXPECT_EQ(Value::U64(std::numeric_limits<uint64_t>::max()).ToInteger<int64_t>(), std::nullopt);
  EXPECT_EQ(Value::I8(-128).ToInteger<int32_t>(), -128);
  // Not integers: bool, float, string.
  EXPECT_EQ(Value::Bool(true).ToInteger<uint32_t>(), std::nullopt);
  EXPECT_EQ(Value::F32(1.0f).ToInteger<uint32_t>(), std::nullopt);
  EXPECT_FALSE(Value::Bool(true).is_integer());
  EXPECT_TRUE(Value::I16(3).is_integer());
  EXPECT_EQ(Value::F64(0.25).ToFloat(), 0.25);
  EXPECT_EQ(Value::U8(1).ToFloat(), std::nullopt);
}

TEST(ValueTest, EqualityComparesTypeAndValue) {
  EXPECT_EQ(Value::U32(5), Value::U32(5));
  EXPECT_NE(Value::U32(5), Value::I32(5));
  // Empty arrays differ by element type.
  EXPECT_NE(Value::Array(ValueType::kUint8, {}), Value::Array(ValueType::kString, {}));
  EXPECT_EQ(Value::StrArray({"a", "b"}), Value::StrArray({"a", "b"}));
}

TEST(FormatValueTest, Scalars) {
  EXPECT_EQ(FormatValue(Value::U32(4294967295u)), "4294967295");
  EXPECT_EQ(FormatValue(Value::I8(-5)), "-5");
  EXPECT_EQ(FormatValue(Value::U8(200)), "200");
  EXPECT_EQ(FormatValue(Value::I64(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(FormatValue(Value::Bool(false)), "false");
  EXPECT_EQ(FormatValue(Value::F32(0.5f)), "0.5");
  EXPECT_EQ(FormatValue(Value::F32(1e-5f)), "1e-05");  // shortest text that reads back exactly
  EXPECT_EQ(FormatValue(Value::F64(10000.0)), "10000");
}

TEST(FormatValueTest, StringsAreQuotedAndEscaped) {
  EXPECT_EQ(FormatValue(Value::Str("llama")), "\"llama\"");
  EXPECT_EQ(FormatValue(Value::Str("a\"b\\c\nd")), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(FormatValue(Value::Str(std::string("\x01\x7f", 2))), "\"\\x01\\x7f\"");
  EXPECT_EQ(FormatValue(Value::Str("\xe2\x96\x81the")), "\"\xe2\x96\x81the\"");  // UTF-8 kept
}

TEST(FormatValueTest, ArraysAreElidedPastTheLimit) {
  std::vector<int32_t> ids(512);
  for (int i = 0; i < 512; ++i) ids[i] = i + 1;
  EXPECT_EQ(FormatValue(Value::I32Array(ids), 3), "[1, 2, 3, ... (512 items)]");
  EXPECT_EQ(FormatValue(Value::I32Array({7, 8, 9})), "[7, 8, 9]");
  EXPECT_EQ(FormatValue(Value::I32Array({7, 8, 9}), 3), "[7, 8, 9]");
  EXPECT_EQ(FormatValue(Value::I32Array({7, 8, 9}), 0), "[... (3 items)]");
  EXPECT_EQ(FormatValue(Value::Array(ValueType::kString, {})), "[]");
  EXPECT_EQ(FormatValue(Value::StrArray({"a", "b"})), "[\"a\", \"b\"]");
  const Value nested = Value::Array(ValueType::kArray,
                                    {Value::I32Array({1, 2}), Value::Array(ValueType::kBool, {})});
  EXPECT_EQ(FormatValue(nested), "[[1, 2], []]");
}

}  // namespace
}  // namespace h2o::gguf
