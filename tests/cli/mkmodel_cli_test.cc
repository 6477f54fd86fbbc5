// `h2o mkmodel` through the real binary: the file it writes runs under
// `h2o generate`, and every bad flag is one error line with no file left.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

class MkModelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("h2o_mkmodel_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

const std::string kSmall =
    "mkmodel --arch llama --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 96 --vocab 300 "
    "--ctx 256 --seed 1";


TEST_F(MkModelCli, WrittenModelGenerates) {
  for (const char* type : {"f32", "f16", "q8_0", "q4_0"}) {
    SCOPED_TRACE(type);
    const std::string model = Path(std::string("m_") + type + ".gguf");
    const auto made = RunH2o(kSmall + " -t 2 --type " + type + " -o " + model);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_NE(made.err.find("wrote " + model), std::string::npos) << made.err;

    const auto gen = RunH2o("generate -m " + model + " --tokens '1 2 3' -n 5 --print-ids --temp 0");
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    // The prompt, then five generated ids, each a valid token.
    std::istringstream ids(gen.out);
    std::vector<int> got;
    for (int id; ids >> id;) got.push_back(id);
    ASSERT_EQ(got.size(), 8u) << gen.out;
    EXPECT_EQ(std::vector<int>(got.begin(), got.begin() + 3), (std::vector<int>{1, 2, 3}));
    for (int id : got) EXPECT_TRUE(id >= 0 && id < 300) << gen.out;
  }
}

TEST_F(MkModelCli, SameFlagsSameFile) {
  ASSERT_EQ(RunH2o(kSmall + " --type q8_0 -t 3 -o " + Path("a.gguf")).exit_code, 0);
  ASSERT_EQ(RunH2o(kSmall + " --type q8_0 -t 1 -o " + Path("b.gguf")).exit_code, 0);
  const auto cmp = RunH2o("inspect " + Path("a.gguf"));  // the file is a valid GGUF
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_EQ(std::system(("cmp -s " + Path("a.gguf") + " " + Path("b.gguf")).c_str()), 0);
}

TEST_F(MkModelCli, BadFlagsGiveOneErrorLine) {
  const std::string out = " -o " + Path("bad.gguf");
  const std::string shape = "mkmodel --layers 1 --vocab 300 --ctx 64";
  ExpectOneErrorLine(RunH2o(shape + " --dim 100 --heads 3 --kv-heads 1" + out),
                     "--dim 100 is not a multiple of --heads 3");
  ExpectOneErrorLine(RunH2o(shape + " --dim 64 --heads 4 --kv-heads 3" + out),
                     "--heads 4 is not a multiple of --kv-heads 3");
  ExpectOneErrorLine(RunH2o(shape + " --dim 96 --heads 32 --kv-heads 4 --ffn 64" + out), "is odd");
  ExpectOneErrorLine(RunH2o(shape + " --dim 64 --heads 4 --kv-heads 2 --ffn 100 --type q4_0" + out),
                     "multiples of 32");
  ExpectOneErrorLine(RunH2o(shape + " --dim 64 --heads 4 --kv-heads 2 --ffn 96 --type q5_k" + out),
                     "unknown --type 'q5_k'");
  ExpectOneErrorLine(RunH2o("mkmodel --dim 64 --heads 4 --kv-heads 2 --ffn 96 --vocab 100" + out),
                     "--vocab 100 is too small");
  EXPECT_FALSE(std::filesystem::exists(Path("bad.gguf")));

  const std::string unwritable = Path("no_such_dir/x.gguf");
  ExpectOneErrorLine(RunH2o(kSmall + " --type f16 -o " + unwritable),
                     unwritable + ": cannot create");
  EXPECT_FALSE(std::filesystem::exists(Path("no_such_dir")));
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

}  // namespace
}  // namespace h2o
