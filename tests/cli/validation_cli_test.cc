// What h2o refuses before it runs, through the real binary: weights holding
// a NaN or Inf (--check-tensors at load; without it, the first non-finite
// logits), and a context whose KV cache no machine could hold.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "cli/run_binary.h"
#include "gguf/file.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

class ValidationCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_validation_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A small random model of `type`, written by h2o mkmodel.
  std::string Make(const std::string& type) {
    const std::string path = (dir_ / (type + ".gguf")).string();
    const auto r = RunH2o("mkmodel --arch llama --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 96 "
                          "--vocab 300 --ctx 256 --seed 1 -q --type " + type + " -o " + path);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  // Overwrites bytes of tensor `name`'s data, `at` bytes into it.
  static void Poke(const std::string& path, const std::string& name, size_t at, const void* bytes, size_t n) {
    uint64_t offset = 0;
    {
      auto file = gguf::File::Open(path);
      ASSERT_TRUE(file.ok()) << file.status().message();
      const gguf::TensorInfo* t = (*file)->FindTensor(name);
      ASSERT_NE(t, nullptr) << name;
      ASSERT_LE(at + n, t->nbytes);
      offset = (*file)->data_offset() + t->offset + at;
    }
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
    ASSERT_TRUE(f.good());
  }

  std::filesystem::path dir_;
};

const std::string kRun = " --tokens '1 2 3' -n 4 --temp 0 --no-display-prompt";

TEST_F(ValidationCli, CheckTensorsNamesTheF32ValueThatIsNan) {
  const std::string model = Make("f32");
  // blk.1.ffn_down.weight is [96 columns] x 64 rows of f32: row 3, column 5.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Poke(model, "blk.1.ffn_down.weight", (3 * 96 + 5) * sizeof(float), &nan, sizeof nan);
  ExpectOneErrorLine(RunH2o("generate -m " + model + kRun + " --check-tensors"),
                     model + ": tensor 'blk.1.ffn_down.weight' has a non-finite value (nan) at row 3, column 5");
  // Without the scan the NaN reaches the logits, which are refused rather
  // than sampled or scored.
  ExpectOneErrorLine(RunH2o("generate -m " + model + kRun),
                     "the logits for the token at position 2 are not finite");
  const std::string ids = (dir_ / "ids.txt").string();
  std::ofstream(ids) << "1 2 3 4 5 6\n";
  ExpectOneErrorLine(RunH2o("perplexity -m " + model + " --token-file " + ids),
                     "the logits for the token at position 0 are not finite");
}

TEST_F(ValidationCli, CheckTensorsFindsAnF16InfAndAQuantizedBlocksScale) {
  const std::string f16 = Make("f16");
  const uint16_t inf = 0x7C00;  // f16 +Inf
  Poke(f16, "token_embd.weight", (7 * 64 + 2) * 2, &inf, sizeof inf);
  ExpectOneErrorLine(RunH2o("generate -m " + f16 + kRun + " --check-tensors"),
                     "tensor 'token_embd.weight' has a non-finite value (inf) at row 7, column 2");
  // q8_0: each block of 32 is an f16 scale, then 32 int8 codes. An Inf
  // scale makes the block's values Inf (or NaN for a zero code).
  const std::string q8 = Make("q8_0");
  // blk.0.attn_q.weight rows are 64 values, two blocks of 34 bytes: the
  // third block starts row 1.
  Poke(q8, "blk.0.attn_q.weight", 2 * 34, &inf, sizeof inf);
  const std::string ids = (dir_ / "ids.txt").string();
  std::ofstream(ids) << "1 2 3\n";
  ExpectOneErrorLine(RunH2o("perplexity -m " + q8 + " --check-tensors --token-file " + ids),
                     "tensor 'blk.0.attn_q.weight' has a non-finite value");
  const auto r = RunH2o("perplexity -m " + q8 + " --check-tensors --token-file " + ids);
  EXPECT_NE(r.err.find("at row 1, column 0"), std::string::npos) << r.err;
}

TEST_F(ValidationCli, CleanWeightsPassTheScan) {
  const auto r = RunH2o("generate -m " + testing::ModelPath() + kRun + " --check-tensors --print-ids");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream ids(r.out);
  int n = 0;
  for (int id; ids >> id;) ++n;
  EXPECT_EQ(n, 4) << r.out;  // the 4 generated ids (the prompt is not displayed)
}

TEST_F(ValidationCli, AContextNoMachineHoldsIsRefusedBeforeAllocating) {
  // 5 layers x 4 KV heads x 2e9 slots x 40 bytes: about 1.5 TiB.
  const auto r = RunH2o("generate -m " + testing::ModelPath() + " -c 2000000000" + kRun);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // The warning that -c passes the trained context comes first.
  const size_t last = r.err.rfind("h2o: error: ");
  ASSERT_NE(last, std::string::npos) << r.err;
  const std::string error = r.err.substr(last);
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << r.err;
  EXPECT_NE(error.find("the KV cache (5 layers x 4 KV heads x up to 2000000000 tokens of 8 f16 values"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("lower the context size or set a KV budget"), std::string::npos) << error;
}

}  // namespace
}  // namespace h2o
