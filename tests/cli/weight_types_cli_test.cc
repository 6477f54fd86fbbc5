// A model with tensors of types h2o cannot run (the bundled model rewritten
// with blk.0.attn_q.weight as iq4_nl and an extra iq2_xxs tensor): `h2o
// inspect` opens it, describes it as usual and lists those tensors.
#include <gtest/gtest.h>

#include <filesystem>
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

}  // namespace
}  // namespace h2o
