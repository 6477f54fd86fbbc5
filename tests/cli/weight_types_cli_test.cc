// Weight types through the real binary. A model with tensors of types h2o
// cannot run (the bundled model rewritten with blk.0.attn_q.weight as
// iq4_nl and an extra iq2_xxs tensor): `h2o inspect` opens it, describes it
// as usual and lists those tensors. And q8_0 / q4_0 weights give the same
// results repacked at load or read as stored (--no-repack).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::RunH2o;

// Writes the bundled model to `path` with blk.0.attn_q.weight retyped to
// iq4_nl (zero bytes of the right size) and an iq2_xxs tensor appended.
void WriteModelWithUnrunnableTensors(const std::string& path) {
  auto src = gguf::File::Open(testing::ModelPath());
  ASSERT_TRUE(src.ok()) << src.status().message();
  gguf::Writer w;
  for (const gguf::KeyValue& kv : (*src)->metadata()) w.Set(kv.key, kv.value);
  for (const gguf::TensorInfo& t : (*src)->tensors()) {
    if (t.name == "blk.0.attn_q.weight") {
      const std::vector<uint8_t> zeros(RowBytes(TensorType::kIQ4_NL, t.dims[0]) * t.dims[1]);
      ASSERT_TRUE(
          w.AddTensor(t.name, TensorType::kIQ4_NL, t.dims, zeros.data(), zeros.size()).ok());
    } else {
      ASSERT_TRUE(w.AddTensor(t.name, t.type, t.dims, t.data, t.nbytes).ok());
    }
  }
  const std::vector<uint8_t> iq2(2 * 66);
  ASSERT_TRUE(
      w.AddTensor("extra.iq2", TensorType::kIQ2_XXS, {256, 2}, iq2.data(), iq2.size()).ok());
  ASSERT_TRUE(w.Write(path).ok());
}

TEST(WeightTypesCli, InspectListsTensorsOfTypesItCannotRun) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "h2o_weight_types_cli_test.gguf").string();
  WriteModelWithUnrunnableTensors(path);
  const auto r = RunH2o("inspect --all-tensors " + path);
  std::filesystem::remove(path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("general.architecture"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tensors of types h2o cannot run (2; it runs f32, f16, bf16, q4_0, q4_1, "
                       "q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K):\n"
                       "  blk.0.attn_q.weight              iq4_nl\n"
                       "  extra.iq2                        iq2_xxs\n"),
            std::string::npos)
      << r.out;
}

// Running it names the file, the tensor and its type in one line.
TEST(WeightTypesCli, RunningSuchAModelNamesTheTensorAndType) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "h2o_weight_types_cli_run.gguf").string();
  WriteModelWithUnrunnableTensors(path);
  const auto r = RunH2o("generate -m " + path + " -p hello -n 4");
  std::filesystem::remove(path);
  EXPECT_EQ(r.exit_code, 1);
  testing::ExpectOneErrorLine(r, path +
                                     ": tensor 'blk.0.attn_q.weight' has type iq4_nl, "
                                     "which h2o cannot run (runs: f32, f16, bf16, q4_0");
}

// --no-repack reads the file's q8_0 and q4_0 rows as they are: the same
// text out of generate and the same perplexity as the repacked default
// (whose products are bit for bit the rows'), and bench takes it too.
TEST(WeightTypesCli, NoRepackGivesTheSameResults) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("h2o_no_repack_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* type : {"q8_0", "q4_0"}) {
    SCOPED_TRACE(type);
    const std::string model = (dir / (std::string(type) + ".gguf")).string();
    const auto made = RunH2o("mkmodel --dim 64 --heads 4 --kv-heads 2 --layers 2 --ffn 96 "
                             "--vocab-from " + testing::ModelPath() +
                             " --ctx 256 --sharpen 4 -t 2 --type " + type + " -o " + model);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const std::string ids = (dir / "ids.txt").string();
    std::ofstream(ids) << "1 7 42 99 5 64 300 12 8 400 17 3 250 61 88 9\n";
    for (const std::string& command :
         {"generate -m " + model + " --tokens \"1 7 42\" -n 12 --temp 0 --ignore-eos -q",
          "perplexity -m " + model + " --token-file " + ids + " -q"}) {
      const auto repacked = RunH2o(command);
      const auto rows = RunH2o(command + " --no-repack");
      ASSERT_EQ(repacked.exit_code, 0) << repacked.err;
      ASSERT_EQ(rows.exit_code, 0) << rows.err;
      EXPECT_FALSE(repacked.out.empty());
      EXPECT_EQ(rows.out, repacked.out) << command;
    }
    const auto bench = RunH2o("bench -m " + model + " -p 8 -n 2 -r 1 --no-warmup --no-repack");
    EXPECT_EQ(bench.exit_code, 0) << bench.err;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace h2o
