// Every kind of malformed file yields its own one-line error that begins with
// the path. The bytes are laid out by hand so each case breaks one rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "gguf/gguf.h"
#include "gguf/parser.h"
#include "gguf_test_util.h"

namespace h2o::gguf {
namespace {

using testing::Bytes;
using testing::TempDir;
using testing::WriteBytes;

constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ8_0 = 8;
constexpr uint32_t kQ4_K = 12;

class MalformedTest : public ::testing::Test {
 protected:
  // Returns the error message of opening `bytes` written to a file, after
  // checking that opening failed and that the message is one line that
  // begins with the path.
  std::string OpenError(const std::vector<uint8_t>& bytes) {
    const std::string path = dir_.File("bad.gguf");
    WriteBytes(path, bytes);
    Result<std::unique_ptr<File>> file = File::Open(path);
    if (file.ok()) {
      ADD_FAILURE() << "opened a malformed file";
      return "";
    }
    const std::string msg = file.status().message();
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }

  TempDir dir_;
};

using ::testing::HasSubstr;

TEST_F(MalformedTest, TooShort) {
  EXPECT_THAT(OpenError({}), HasSubstr("file too short to be GGUF (0 bytes"));
  EXPECT_THAT(OpenError({'G', 'G'}), HasSubstr("file too short to be GGUF (2 bytes"));
  EXPECT_THAT(OpenError(Bytes().Raw("GGUF", 4).U32(3).bytes()),
              HasSubstr("file too short for a GGUF header (8 bytes, need 24)"));
}

TEST_F(MalformedTest, BadMagic) {
  Bytes b;
  b.Raw("GGML", 4).U32(3).U64(0).U64(0);
  EXPECT_THAT(OpenError(b.bytes()), HasSubstr("not a GGUF file (bad magic 47 47 4d 4c"));
}

TEST_F(MalformedTest, UnsupportedVersions) {
  EXPECT_THAT(OpenError(Bytes().Header(1, 0, 0).bytes()), HasSubstr("unsupported GGUF version 1"));
  EXPECT_THAT(OpenError(Bytes().Header(4, 0, 0).bytes()), HasSubstr("unsupported GGUF version 4"));
  EXPECT_THAT(OpenError(Bytes().Header(0x03000000, 0, 0).bytes()), HasSubstr("big-endian"));
}

TEST_F(MalformedTest, AbsurdCounts) {
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 1ull << 60).bytes()),
              HasSubstr("more than a file of 24 bytes can hold"));
  EXPECT_THAT(OpenError(Bytes().Header(3, ~0ull, ~0ull).bytes()),
              HasSubstr("more than a file of 24 bytes can hold"));
  // 100 spare bytes hold at most 3 tensor infos of >= 32 bytes.
  EXPECT_THAT(OpenError(Bytes().Header(3, 4, 0).Zeros(100).bytes()),
              HasSubstr("header claims 0 key/values and 4 tensors, more than a file of 124 bytes"));
}

TEST_F(MalformedTest, StringsPastEndOfFile) {
  Bytes key;
  key.Header(3, 0, 1).U64(1000).Raw("abc", 3).Zeros(10);
  EXPECT_THAT(OpenError(key.bytes()),
              HasSubstr("key #0 of length 1000 at offset 24 runs past end of file (file size 45)"));
  Bytes value;
  value.Header(3, 0, 1).Str("k").U32(8).U64(50).Raw("xy", 2);
  EXPECT_THAT(OpenError(value.bytes()),
              HasSubstr("key 'k': string of length 50 at offset 37 runs past end of file"));
  Bytes huge;  // a length near 2^64 must not wrap around
  huge.Header(3, 0, 1).Str("k").U32(8).U64(~0ull).Zeros(4);
  EXPECT_THAT(OpenError(huge.bytes()), HasSubstr("runs past end of file"));
}

TEST_F(MalformedTest, TruncatedScalar) {
  Bytes b;
  b.Header(3, 0, 1).Str("k").U32(4).U8(1);  // uint32 value needs 4 bytes
  EXPECT_THAT(OpenError(b.bytes()),
              HasSubstr("key 'k': unexpected end of file reading value at offset 37"));
}

TEST_F(MalformedTest, UnknownValueTypes) {
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 1).Str("k").U32(13).U32(0).bytes()),
              HasSubstr("key 'k': unknown value type 13 at offset 33"));
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 1).Str("k").U32(9).U32(77).U64(0).bytes()),
              HasSubstr("key 'k': unknown value type 77"));
}

TEST_F(MalformedTest, BoolMustBeZeroOrOne) {
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 1).Str("k").U32(7).U8(2).bytes()),
              HasSubstr("key 'k': bool value 2 at offset 37 is neither 0 nor 1"));
}

TEST_F(MalformedTest, ArrayCountPastEnd) {
  Bytes b;
  b.Header(3, 0, 1).Str("k").U32(9).U32(4).U64(1000).U32(1).U32(2);
  EXPECT_THAT(OpenError(b.bytes()),
              HasSubstr("key 'k': array of 1000 uint32 items at offset 37 runs past end of file"));
  Bytes nested;  // the inner array's count is checked too, with the item index
  nested.Header(3, 0, 1).Str("k").U32(9).U32(9).U64(2);
  nested.U32(8).U64(0);           // item 0: empty string array
  nested.U32(8).U64(1ull << 40);  // item 1: claims 2^40 strings
  EXPECT_THAT(OpenError(nested.bytes()),
              HasSubstr("key 'k': array item 1: array of 1099511627776 string items"));
}

// `levels` arrays inside one another, the innermost an empty uint8 array.
std::vector<uint8_t> NestedArrays(int levels) {
  Bytes b;
  b.Header(3, 0, 1).Str("k").U32(9);
  for (int i = 0; i < levels - 1; ++i) b.U32(9).U64(1);
  b.U32(0).U64(0);
  return b.bytes();
}

TEST_F(MalformedTest, ArrayNestingIsBounded) {
  TempDir dir;
  WriteBytes(dir.File("ok.gguf"), NestedArrays(8));
  EXPECT_TRUE(File::Open(dir.File("ok.gguf")).ok());
  EXPECT_THAT(OpenError(NestedArrays(9)), HasSubstr("arrays nested more than 8 deep"));
  EXPECT_THAT(OpenError(NestedArrays(5000)), HasSubstr("arrays nested more than 8 deep"));
}

TEST_F(MalformedTest, DuplicateKey) {
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 2).KvU32("a", 1).KvU32("a", 2).bytes()),
              HasSubstr("duplicate key 'a'"));
  // Names from the file are escaped so the message stays one line.
  const std::string key("a\nb", 3);
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 2).KvU32(key, 1).KvU32(key, 2).bytes()),
              HasSubstr("duplicate key 'a\\x0ab'"));
}

TEST_F(MalformedTest, BadAlignment) {
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 1).KvU32("general.alignment", 48).bytes()),
              HasSubstr("general.alignment is 48, not a power of two"));
  EXPECT_THAT(OpenError(Bytes().Header(3, 0, 1).KvU32("general.alignment", 0).bytes()),
              HasSubstr("general.alignment is 0, not a power of two"));
  Bytes str;
  str.Header(3, 0, 1).Str("general.alignment").U32(8).Str("32");
  EXPECT_THAT(OpenError(str.bytes()),
              HasSubstr("general.alignment has type string, expected uint32"));
}

// A file with one tensor info and `data_bytes` zero bytes of data.
std::vector<uint8_t> OneTensor(const std::string& name, const std::vector<int64_t>& dims,
                               uint32_t type, uint64_t offset, size_t data_bytes = 256) {
  Bytes b;
  b.Header(3, 1, 0).TensorInfo(name, dims, type, offset).PadTo(32).Zeros(data_bytes);
  return b.bytes();
}

TEST_F(MalformedTest, DimensionCount) {
  EXPECT_THAT(OpenError(OneTensor("w", {}, kF32, 0)),
              HasSubstr("tensor 'w' has 0 dimensions (must be 1 to 4)"));
  EXPECT_THAT(OpenError(OneTensor("w", {1, 1, 1, 1, 1}, kF32, 0)),
              HasSubstr("tensor 'w' has 5 dimensions (must be 1 to 4)"));
}

TEST_F(MalformedTest, NonPositiveDimension) {
  EXPECT_THAT(OpenError(OneTensor("w", {4, 0}, kF32, 0)),
              HasSubstr("tensor 'w' dimension 1 is 0 (must be positive)"));
  EXPECT_THAT(OpenError(OneTensor("w", {-3}, kF32, 0)),
              HasSubstr("tensor 'w' dimension 0 is -3 (must be positive)"));
}

TEST_F(MalformedTest, SizeOverflow) {
  EXPECT_THAT(OpenError(OneTensor("w", {1ll << 62, 4}, kF32, 0)),
              HasSubstr("tensor 'w' element count overflows"));
  // 2^62 elements fit int64, but 2^62 * 4 bytes do not fit 64 bits.
  EXPECT_THAT(OpenError(OneTensor("w", {1ll << 62}, kF32, 0)),
              HasSubstr("tensor 'w' byte size overflows"));
}

// Any type GGML defines opens (tensor_types_test.cc); ids GGML retired or
// never defined do not.
TEST_F(MalformedTest, RetiredOrUnknownTensorType) {
  EXPECT_THAT(OpenError(OneTensor("blk.0.ffn_down.weight", {256}, 4, 0)),
              HasSubstr("tensor 'blk.0.ffn_down.weight' has type q4_2 (GGML id 4), which GGML has "
                        "retired"));
  EXPECT_THAT(OpenError(OneTensor("w", {256}, 31, 0)),
              HasSubstr("has type q4_0_4_4 (GGML id 31), which GGML has retired"));
  EXPECT_THAT(OpenError(OneTensor("w", {256}, 40, 0)), HasSubstr("has unknown type (GGML id 40)"));
  EXPECT_THAT(OpenError(OneTensor("w", {256}, 999, 0)),
              HasSubstr("tensor 'w' has unknown type (GGML id 999)"));
}

TEST_F(MalformedTest, RowNotAMultipleOfTheBlock) {
  EXPECT_THAT(
      OpenError(OneTensor("w", {33, 2}, kQ8_0, 0)),
      HasSubstr("tensor 'w' row of 33 elements is not a multiple of the q8_0 block size 32"));
  EXPECT_THAT(
      OpenError(OneTensor("w", {2048 + 32, 2}, kQ4_K, 0, 4096)),
      HasSubstr("tensor 'w' row of 2080 elements is not a multiple of the q4_K block size 256"));
}

TEST_F(MalformedTest, MisalignedOffset) {
  EXPECT_THAT(OpenError(OneTensor("w", {1}, kF32, 4)),
              HasSubstr("tensor 'w' offset 4 is not a multiple of the alignment 32"));
  Bytes b;  // 32 is aligned by default but not under general.alignment = 64
  b.Header(3, 1, 1).KvU32("general.alignment", 64).TensorInfo("w", {1}, kF32, 32);
  b.PadTo(64).Zeros(128);
  EXPECT_THAT(OpenError(b.bytes()),
              HasSubstr("tensor 'w' offset 32 is not a multiple of the alignment 64"));
}

TEST_F(MalformedTest, DuplicateTensorName) {
  Bytes b;
  b.Header(3, 2, 0).TensorInfo("w", {1}, kF32, 0).TensorInfo("w", {1}, kF32, 32);
  b.PadTo(32).Zeros(64);
  EXPECT_THAT(OpenError(b.bytes()), HasSubstr("duplicate tensor name 'w'"));
}

TEST_F(MalformedTest, OverlappingTensors) {
  // 'b' starts inside 'a' (4x4 f32: 64 bytes at 0); listed first, so the
  // check does not depend on the order of the tensor infos.
  Bytes b;
  b.Header(3, 2, 0).TensorInfo("b", {4}, kF32, 32).TensorInfo("a", {4, 4}, kF32, 0);
  b.PadTo(32).Zeros(96);
  EXPECT_THAT(OpenError(b.bytes()), HasSubstr("tensors 'a' (offset 0, size 64) and 'b' (offset 32) overlap"));
  // The same tensors end to end are fine.
  Bytes ok;
  ok.Header(3, 2, 0).TensorInfo("b", {4}, kF32, 64).TensorInfo("a", {4, 4}, kF32, 0);
  ok.PadTo(32).Zeros(96);
  TempDir dir;
  WriteBytes(dir.File("ok.gguf"), ok.bytes());
  EXPECT_TRUE(File::Open(dir.File("ok.gguf")).ok());
}

TEST_F(MalformedTest, TensorDataPastEndOfFile) {
  // header 24 + info (8 + 19 name + 4 + 2 * 8 + 4 + 8 = 59) = 83, data at 96;
  // a 4x4 f32 tensor needs 64 bytes but only 60 follow.
  EXPECT_THAT(OpenError(OneTensor("blk.3.attn_q.weight", {4, 4}, kF32, 0, 60)),
              HasSubstr("tensor 'blk.3.attn_q.weight' extends past end of file (offset 0 in the "
                        "data section at 96, size 64, file size 156)"));
  EXPECT_TRUE([&] {
    TempDir dir;
    WriteBytes(dir.File("ok.gguf"), OneTensor("w", {4, 4}, kF32, 0, 64));
    return File::Open(dir.File("ok.gguf")).ok();
  }());
  // Offsets near 2^64 must not wrap around.
  EXPECT_THAT(OpenError(OneTensor("w", {1}, kF32, 1ull << 63)),
              HasSubstr("extends past end of file"));
  EXPECT_THAT(OpenError(OneTensor("w", {1}, kF32, ~0ull - 31)),
              HasSubstr("extends past end of file"));
}

TEST_F(MalformedTest, MissingOrUnreadablePath) {
  TempDir dir;
  const std::string missing = dir.File("nope.gguf");
  Result<std::unique_ptr<File>> file = File::Open(missing);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message().rfind(missing + ": cannot open", 0), 0u);
  const std::string directory = dir.File("");
  file = File::Open(directory);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("not a regular file"));
}

// Random corruptions of a small valid file, parsed in memory: each must
// decode or fail cleanly (the ASan build also catches any read past the
// buffer, which is allocated to the exact size).
TEST(CorruptionTest, RandomBytesNeverCrash) {
  TempDir dir;
  const std::string path = dir.File("v.gguf");
  Writer w;
  w.SetStringArray("tokens", {"a", "bc", "def"});
  w.Set("nested", Value::Array(ValueType::kArray, {Value::I32Array({1, 2})}));
  w.SetF32("eps", 1e-5f);
  w.SetBool("flag", true);
  const float data[64] = {};
  ASSERT_TRUE(w.AddTensor("t0", TensorType::kF32, {8, 8}, data, sizeof(data)).ok());
  ASSERT_TRUE(w.AddTensor("t1", TensorType::kQ8_0, {32}, data, 34).ok());
  ASSERT_TRUE(w.Write(path).ok());
  const std::vector<uint8_t> good = testing::ReadBytes(path);
  const size_t header_bytes = File::Open(path).value()->data_offset();
  ASSERT_TRUE(internal::ParseFile(good.data(), good.size()).ok());

  std::mt19937 rng(1234);
  int failures = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> bytes = good;
    // Parsing happens before the data section, so corrupt there; sometimes
    // also cut the file short.
    const int n_changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < n_changes; ++c) bytes[rng() % header_bytes] = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    std::vector<uint8_t> exact(bytes);  // exact capacity, so overreads hit the redzone
    exact.shrink_to_fit();
    Result<internal::ParsedFile> parsed = internal::ParseFile(exact.data(), exact.size());
    if (!parsed.ok()) {
      ++failures;
      EXPECT_EQ(parsed.status().message().find('\n'), std::string::npos);
    }
  }
  EXPECT_GT(failures, 1000);
}

}  // namespace
}  // namespace h2o::gguf
