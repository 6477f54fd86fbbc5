// Writer failures: bad tensors are refused, and a failed Write leaves no file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/gguf.h"
#include "gguf_test_util.h"

namespace h2o::gguf {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

TEST(WriterTest, AddTensorValidatesShapeAndSize) {
  Writer w;
  const std::vector<uint8_t> buf(1024);
  EXPECT_TRUE(w.AddTensor("a", TensorType::kF32, {4, 2}, buf.data(), 32).ok());
  EXPECT_THAT(w.AddTensor("a", TensorType::kF32, {1}, buf.data(), 4).message(),
              HasSubstr("duplicate tensor 'a'"));
  EXPECT_THAT(w.AddTensor("b", TensorType::kF32, {4, 2}, buf.data(), 31).message(),
              HasSubstr("31 bytes given, shape needs 32"));
  EXPECT_THAT(w.AddTensor("c", TensorType::kQ8_0, {64, 2}, buf.data(), 128).message(),
              HasSubstr("128 bytes given, shape needs 136"));  // 2 rows * 2 blocks * 34
  EXPECT_THAT(w.AddTensor("d", TensorType::kQ4_0, {33}, buf.data(), 18).message(),
              HasSubstr("row of 33 elements is not a multiple of the block size 32"));
  EXPECT_THAT(w.AddTensor("e", TensorType::kF32, {}, buf.data(), 0).message(),
              HasSubstr("0 dimensions"));
  EXPECT_THAT(w.AddTensor("f", TensorType::kF32, {1, 1, 1, 1, 1}, buf.data(), 4).message(),
              HasSubstr("5 dimensions"));
  EXPECT_THAT(w.AddTensor("g", TensorType::kF32, {2, 0}, buf.data(), 0).message(),
              HasSubstr("dimension 1 <= 0"));
  EXPECT_THAT(w.AddTensor("h", static_cast<TensorType>(4), {256}, buf.data(), 144).message(),
              HasSubstr("unsupported type id 4"));  // q4_2, retired from GGML
  EXPECT_TRUE(w.AddTensor("k", TensorType::kQ4_K, {256}, buf.data(), 144).ok());
  EXPECT_TRUE(w.AddTensor("q", TensorType::kQ4_0, {64, 2}, buf.data(), 72).ok());
}

TEST(WriterTest, FailedWriteLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.File("no_such_dir/out.gguf");
  Writer w;
  w.SetU32("a", 1);
  Status s = w.Write(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(path + ": cannot create", 0), 0u) << s.message();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WriterTest, RenameFailureRemovesTheTemporaryFile) {
  TempDir dir;
  // A non-empty directory at `path` makes the final rename fail.
  const std::string path = dir.File("occupied");
  std::filesystem::create_directories(path + "/child");
  Writer w;
  w.SetU32("a", 1);
  Status s = w.Write(path);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot rename"));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_TRUE(std::filesystem::is_directory(path + "/child"));
}

TEST(WriterTest, BadAlignmentIsRefusedBeforeWriting) {
  TempDir dir;
  const std::string path = dir.File("out.gguf");
  Writer w;
  w.SetU32("general.alignment", 48);
  Status s = w.Write(path);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("general.alignment must be a power of two, got 48"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(WriterTest, WriteReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.File("out.gguf");
  testing::WriteBytes(path, std::vector<uint8_t>(5000, 0xAB));
  Writer w;
  w.SetString("general.name", "new");
  ASSERT_TRUE(w.Write(path).ok());
  Result<std::unique_ptr<File>> f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value()->GetString("general.name").value(), "new");
  EXPECT_LT(f.value()->file_size(), 5000u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace h2o::gguf
