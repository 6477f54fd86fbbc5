#include "core/mapped_file.h"

#include <gtest/gtest.h>

#include "gguf_test_util.h"

namespace h2o {
namespace {

TEST(MappedFileTest, MapsTheBytes) {
  gguf::testing::TempDir dir;
  const std::string path = dir.File("f.bin");
  gguf::testing::WriteBytes(path, {1, 2, 3, 250});
  Result<std::unique_ptr<MappedFile>> f = MappedFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f.value()->size(), 4u);
  EXPECT_EQ(f.value()->data()[3], 250);
  EXPECT_EQ(f.value()->path(), path);
}

TEST(MappedFileTest, EmptyFileHasNoData) {
  gguf::testing::TempDir dir;
  gguf::testing::WriteBytes(dir.File("e"), {});
  Result<std::unique_ptr<MappedFile>> f = MappedFile::Open(dir.File("e"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value()->size(), 0u);
  EXPECT_EQ(f.value()->data(), nullptr);
}

TEST(MappedFileTest, ErrorsNameThePath) {
  gguf::testing::TempDir dir;
  Result<std::unique_ptr<MappedFile>> f = MappedFile::Open(dir.File("missing"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message().rfind(dir.File("missing") + ": cannot open (", 0), 0u)
      << f.status().message();
}

}  // namespace
}  // namespace h2o
