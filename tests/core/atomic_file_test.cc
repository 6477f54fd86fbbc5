// WriteFileAtomically: the file holds exactly the new contents, and a
// failed write leaves neither the file nor its .tmp twin.
#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace h2o {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::path(::testing::TempDir()) / std::string("h2o_atomic_file_").append(test);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesAndReplacesContents) {
  const std::string path = File("out.csv");
  ASSERT_TRUE(WriteFileAtomically(path, "a,b\n1,2\n").ok());
  EXPECT_EQ(ReadAll(path), "a,b\n1,2\n");
  // A shorter second write must not leave the tail of the first.
  ASSERT_TRUE(WriteFileAtomically(path, "x\n").ok());
  EXPECT_EQ(ReadAll(path), "x\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(AtomicFileTest, EmptyAndBinaryContents) {
  const std::string path = File("out.bin");
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(fs::file_size(path), 0u);
  const std::string bytes("a\0b\n", 4);
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  EXPECT_EQ(ReadAll(path), bytes);
}

TEST_F(AtomicFileTest, MissingDirectoryFailsWithPathAndLeavesNothing) {
  const std::string path = File("no_such_dir/out.json");
  const Status s = WriteFileAtomically(path, "{}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(path + ": cannot write file", 0), 0u) << s.message();
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(AtomicFileTest, TargetIsADirectoryFailsAndKeepsIt) {
  // rename() over a non-empty directory fails after the .tmp was written:
  // the .tmp must be cleaned up and the directory kept.
  const std::string path = File("taken");
  fs::create_directories(fs::path(path) / "child");
  const Status s = WriteFileAtomically(path, "data");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

}  // namespace
}  // namespace h2o
