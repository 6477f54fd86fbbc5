// Writer -> File round trips, and the writer's bytes against a hand encoding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "gguf/gguf.h"
#include "gguf_test_util.h"

namespace h2o::gguf {
namespace {

using testing::Bytes;
using testing::RandomBytes;
using testing::ReadBytes;
using testing::TempDir;
using testing::WriteBytes;

std::unique_ptr<File> OpenOrDie(const std::string& path) {
  Result<std::unique_ptr<File>> file = File::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().message();
  return file.ok() ? std::move(file).value() : nullptr;
}

std::vector<KeyValue> EveryValueType() {
  std::vector<KeyValue> kvs;
  kvs.push_back({"u8", Value::U8(255)});
  kvs.push_back({"i8", Value::I8(-128)});
  kvs.push_back({"u16", Value::U16(65535)});
  kvs.push_back({"i16", Value::I16(-32768)});
  kvs.push_back({"u32", Value::U32(4294967295u)});
  kvs.push_back({"i32", Value::I32(std::numeric_limits<int32_t>::min())});
  kvs.push_back({"f32", Value::F32(-1.5e-7f)});
  kvs.push_back({"bool.t", Value::Bool(true)});
  kvs.push_back({"bool.f", Value::Bool(false)});
  kvs.push_back({"str", Value::Str("h\xc3\xa9llo")});
  kvs.push_back({"str.empty", Value::Str("")});
  kvs.push_back({"str.nul", Value::Str(std::string("a\0b", 3))});
  kvs.push_back({"u64", Value::U64(std::numeric_limits<uint64_t>::max())});
  kvs.push_back({"i64", Value::I64(std::numeric_limits<int64_t>::min())});
  kvs.push_back({"f64", Value::F64(3.141592653589793)});
  kvs.push_back({"f32.inf", Value::F32(std::numeric_limits<float>::infinity())});
  kvs.push_back({"arr.u8", Value::Array(ValueType::kUint8, {Value::U8(0), Value::U8(9)})});
  kvs.push_back({"arr.i16", Value::Array(ValueType::kInt16, {Value::I16(-2)})});
  kvs.push_back({"arr.u64", Value::Array(ValueType::kUint64, {Value::U64(1ull << 40)})});
  kvs.push_back({"arr.f64", Value::Array(ValueType::kFloat64, {Value::F64(0.1), Value::F64(-2)})});
  kvs.push_back(
      {"arr.bool", Value::Array(ValueType::kBool, {Value::Bool(true), Value::Bool(false)})});
  kvs.push_back({"arr.str", Value::StrArray({"<unk>", "", "\xe2\x96\x81the"})});
  kvs.push_back({"arr.f32", Value::F32Array({0.0f, -1.25f, 1e30f})});
  kvs.push_back({"arr.i32", Value::I32Array({-1, 0, 2147483647})});
  kvs.push_back({"arr.empty.u32", Value::Array(ValueType::kUint32, {})});
  kvs.push_back({"arr.empty.str", Value::Array(ValueType::kString, {})});
  kvs.push_back({"arr.empty.arr", Value::Array(ValueType::kArray, {})});
  // Nested: inner arrays of different element types, one empty, one nested again.
  kvs.push_back(
      {"arr.nested", Value::Array(ValueType::kArray,
                                  {Value::I32Array({1, 2, 3}), Value::Array(ValueType::kString, {}),
                                   Value::Array(ValueType::kArray, {Value::StrArray({"deep"})})})});
  return kvs;
}

TEST(RoundTripTest, EveryValueTypeSurvives) {
  TempDir dir;
  const std::string path = dir.File("values.gguf");
  const std::vector<KeyValue> kvs = EveryValueType();
  Writer w;
  for (const KeyValue& kv : kvs) w.Set(kv.key, kv.value);
  ASSERT_TRUE(w.Write(path).ok());

  auto file = OpenOrDie(path);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_TRUE(file->tensors().empty());
  ASSERT_EQ(file->metadata().size(), kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(file->metadata()[i].key, kvs[i].key);  // file order = insertion order
    EXPECT_EQ(file->metadata()[i].value, kvs[i].value) << kvs[i].key;
    EXPECT_EQ(file->metadata()[i].value.type(), kvs[i].value.type()) << kvs[i].key;
    ASSERT_NE(file->Find(kvs[i].key), nullptr);
  }
  EXPECT_EQ(file->Find("absent"), nullptr);
  const ArrayValue* empty = file->Find("arr.empty.str")->array();
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->elem_type, ValueType::kString);
  EXPECT_TRUE(empty->items.empty());
  EXPECT_EQ(file->Find("str.nul")->string()->size(), 3u);
}

TEST(RoundTripTest, SetReplacesInPlace) {
  TempDir dir;
  Writer w;
  w.SetU32("a", 1);
  w.SetString("b", "x");
  w.SetF32("a", 2.5f);  // replaced, keeps first position, changes type
  ASSERT_TRUE(w.Write(dir.File("f.gguf")).ok());
  auto file = OpenOrDie(dir.File("f.gguf"));
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(file->metadata().size(), 2u);
  EXPECT_EQ(file->metadata()[0].key, "a");
  EXPECT_EQ(file->metadata()[0].value, Value::F32(2.5f));
  EXPECT_EQ(file->metadata()[1].key, "b");
}

// The writer's output compared with bytes laid out by hand from the spec.
TEST(RoundTripTest, WriterBytesMatchHandEncoding) {
  TempDir dir;
  const float data[2] = {1.0f, -2.0f};
  Writer w;
  w.SetU32("a", 7);
  ASSERT_TRUE(w.AddTensor("t", TensorType::kF32, {2}, data, sizeof(data)).ok());
  ASSERT_TRUE(w.Write(dir.File("f.gguf")).ok());

  Bytes expected;
  expected.Header(3, 1, 1).KvU32("a", 7).TensorInfo("t", {2}, 0, 0);
  ASSERT_EQ(expected.size(), 24u + 17u + 33u);
  expected.PadTo(32).Raw(data, sizeof(data)).PadTo(32);
  ASSERT_EQ(expected.size(), 128u);
  EXPECT_EQ(ReadBytes(dir.File("f.gguf")), expected.bytes());
}

struct TensorCase {
  std::string name;
  TensorType type;
  std::vector<int64_t> dims;
  size_t nbytes;  // derived by hand from the block layout
};

// f32: 4 B/elem; f16, bf16: 2; q8_0: 34 B per 32; q4_0: 18 B per 32.
std::vector<TensorCase> TensorCases() {
  return {
      {"f32.vec", TensorType::kF32, {7}, 28},         {"f32.mat", TensorType::kF32, {3, 5}, 60},
      {"f32.4d", TensorType::kF32, {2, 3, 1, 2}, 48}, {"f16.mat", TensorType::kF16, {5, 3}, 30},
      {"f16.3d", TensorType::kF16, {1, 1, 9}, 18},    {"bf16.mat", TensorType::kBF16, {4, 4}, 32},
      {"bf16.vec", TensorType::kBF16, {11}, 22},      {"q8_0.mat", TensorType::kQ8_0, {64, 3}, 204},
      {"q8_0.vec", TensorType::kQ8_0, {32}, 34},      {"q4_0.mat", TensorType::kQ4_0, {96, 2}, 108},
      {"q4_0.3d", TensorType::kQ4_0, {32, 2, 2}, 72},
  };
}

void CheckTensorsRoundTrip(uint32_t alignment_key /* 0: not set */, uint32_t expected_alignment) {
  TempDir dir;
  const std::string path = dir.File("tensors.gguf");
  Writer w;
  w.SetString("general.architecture", "test");
  if (alignment_key != 0) w.SetU32("general.alignment", alignment_key);
  std::vector<std::vector<uint8_t>> payloads;
  const std::vector<TensorCase> cases = TensorCases();
  for (size_t i = 0; i < cases.size(); ++i) {
    payloads.push_back(RandomBytes(cases[i].nbytes, static_cast<uint32_t>(i + 1)));
    ASSERT_TRUE(w.AddTensor(cases[i].name, cases[i].type, cases[i].dims, payloads[i].data(),
                            payloads[i].size())
                    .ok())
        << cases[i].name;
  }
  ASSERT_TRUE(w.Write(path).ok());

  auto file = OpenOrDie(path);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->alignment(), expected_alignment);
  EXPECT_EQ(file->data_offset() % expected_alignment, 0u);
  const std::vector<uint8_t> raw = ReadBytes(path);
  ASSERT_EQ(raw.size(), file->file_size());
  ASSERT_EQ(file->tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorInfo& t = file->tensors()[i];
    SCOPED_TRACE(cases[i].name);
    EXPECT_EQ(t.name, cases[i].name);
    EXPECT_EQ(t.type, cases[i].type);
    EXPECT_EQ(t.dims, cases[i].dims);
    EXPECT_EQ(t.nbytes, cases[i].nbytes);
    EXPECT_EQ(t.offset % expected_alignment, 0u);
    EXPECT_EQ(file->FindTensor(cases[i].name), &t);
    // The data pointer addresses the bytes at data_offset + offset of the file.
    ASSERT_EQ(std::memcmp(t.data, payloads[i].data(), t.nbytes), 0);
    ASSERT_LE(file->data_offset() + t.offset + t.nbytes, raw.size());
    EXPECT_EQ(
        std::memcmp(raw.data() + file->data_offset() + t.offset, payloads[i].data(), t.nbytes), 0);
  }
  EXPECT_EQ(file->tensors()[2].n_elements(), 12);
  EXPECT_EQ(file->FindTensor("nope"), nullptr);
}

TEST(RoundTripTest, TensorsOfEverySupportedTypeDefaultAlignment) { CheckTensorsRoundTrip(0, 32); }

TEST(RoundTripTest, TensorsHonorAlignment64) { CheckTensorsRoundTrip(64, 64); }

TEST(RoundTripTest, TensorsHonorAlignment1) { CheckTensorsRoundTrip(1, 1); }

TEST(RoundTripTest, VersionTwoReads) {
  TempDir dir;
  const std::string path = dir.File("v2.gguf");
  Writer w;
  w.SetString("general.architecture", "llama");
  w.SetStringArray("tokens", {"a", "b"});
  const float data[4] = {1, 2, 3, 4};
  ASSERT_TRUE(w.AddTensor("w", TensorType::kF32, {2, 2}, data, sizeof(data)).ok());
  ASSERT_TRUE(w.Write(path).ok());
  // v2 differs from v3 only in the version number (both use 64-bit counts).
  std::vector<uint8_t> bytes = ReadBytes(path);
  ASSERT_EQ(bytes[4], 3);
  bytes[4] = 2;
  WriteBytes(path, bytes);

  auto file = OpenOrDie(path);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->version(), 2u);
  EXPECT_EQ(file->GetString("general.architecture").value(), "llama");
  EXPECT_EQ(file->GetStringArray("tokens").value(), (std::vector<std::string>{"a", "b"}));
  ASSERT_NE(file->FindTensor("w"), nullptr);
  EXPECT_EQ(std::memcmp(file->FindTensor("w")->data, data, sizeof(data)), 0);
}

// A hand-encoded v2 file, independent of the writer.
TEST(RoundTripTest, HandEncodedVersionTwoReads) {
  TempDir dir;
  const std::string path = dir.File("hand_v2.gguf");
  Bytes b;
  b.Header(2, 1, 2).KvU32("n", 5).Str("s").U32(8).Str("hi");
  b.TensorInfo("x", {1}, 0, 0).PadTo(32).F32(42.0f);
  WriteBytes(path, b.bytes());
  auto file = OpenOrDie(path);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->version(), 2u);
  EXPECT_EQ(file->GetU32("n").value(), 5u);
  EXPECT_EQ(file->GetString("s").value(), "hi");
  float x = 0;
  std::memcpy(&x, file->FindTensor("x")->data, 4);
  EXPECT_EQ(x, 42.0f);
  EXPECT_EQ(file->data_offset(), 128u);  // 24 + 17 + 23 + 33 = 97, padded to 32
}

}  // namespace
}  // namespace h2o::gguf
