// Files holding every tensor type GGML defines open, each tensor sized with
// its own type's block bytes (written here from ggml-common.h's block
// structs), whether or not h2o can run the type; a tensor one byte short of
// its size is an error. The bytes are laid out by hand (gguf_test_util.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf/gguf.h"
#include "gguf_test_util.h"

namespace h2o::gguf {
namespace {

using testing::Bytes;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::WriteBytes;

struct TypeSize {
  uint32_t id;
  const char* name;
  int64_t block_size;
  size_t block_bytes;
};

// Types h2o cannot run among them (iq*, tq*, mxfp4, q8_1, q8_K, integers,
// f64) and the K-quants it can.
const TypeSize kTypes[] = {
    {3, "q4_1", 32, 20},      {7, "q5_1", 32, 24},      {9, "q8_1", 32, 36},
    {10, "q2_K", 256, 84},    {11, "q3_K", 256, 110},   {12, "q4_K", 256, 144},
    {13, "q5_K", 256, 176},   {14, "q6_K", 256, 210},   {15, "q8_K", 256, 292},
    {16, "iq2_xxs", 256, 66}, {17, "iq2_xs", 256, 74},  {18, "iq3_xxs", 256, 98},
    {19, "iq1_s", 256, 50},   {20, "iq4_nl", 32, 18},   {21, "iq3_s", 256, 110},
    {22, "iq2_s", 256, 82},   {23, "iq4_xs", 256, 136}, {24, "i8", 1, 1},
    {26, "i32", 1, 4},        {28, "f64", 1, 8},        {29, "iq1_m", 256, 56},
    {34, "tq1_0", 256, 54},   {35, "tq2_0", 256, 66},   {39, "mxfp4", 32, 17},
};

// One tensor "t" of dims {512, 3} of the given type, followed by `data`
// bytes of data.
std::vector<uint8_t> OneTensorFile(uint32_t type, size_t data) {
  Bytes b;
  b.Header(3, 1, 0).TensorInfo("t", {512, 3}, type, 0).PadTo(32).Zeros(data);
  return b.bytes();
}

TEST(TensorTypesTest, EveryGgmlTypeOpensWithItsOwnBlockBytes) {
  TempDir dir;
  for (const TypeSize& t : kTypes) {
    const size_t nbytes = static_cast<size_t>(512 / t.block_size) * t.block_bytes * 3;
    const std::string path = dir.File(std::string(t.name) + ".gguf");
    WriteBytes(path, OneTensorFile(t.id, nbytes));
    auto file = File::Open(path);
    ASSERT_TRUE(file.ok()) << t.name << ": " << file.status().message();
    const TensorInfo* info = (*file)->FindTensor("t");
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(static_cast<uint32_t>(info->type), t.id) << t.name;
    EXPECT_EQ(info->nbytes, nbytes) << t.name;
  }
}

TEST(TensorTypesTest, ATensorOneByteShortIsAnError) {
  TempDir dir;
  for (const TypeSize& t : kTypes) {
    const size_t nbytes = static_cast<size_t>(512 / t.block_size) * t.block_bytes * 3;
    const std::string path = dir.File(std::string(t.name) + ".gguf");
    WriteBytes(path, OneTensorFile(t.id, nbytes - 1));
    auto file = File::Open(path);
    ASSERT_FALSE(file.ok()) << t.name;
    EXPECT_THAT(file.status().message(),
                HasSubstr("tensor 't' extends past end of file (offset 0 in the data section at "
                          "96, size " +
                          std::to_string(nbytes)))
        << t.name;
  }
}

}  // namespace
}  // namespace h2o::gguf
