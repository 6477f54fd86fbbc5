// The architectures through the real binary: `h2o mkmodel --arch` files
// generate, a Gemma 3 model's sliding-window layers keep exactly their
// window (KV bytes counted by hand, the dump), and options that make no
// sense for an architecture are one error line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

class ArchCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_arch_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string Path(const std::string& name) { return (dir_ / name).string(); }

  // dim 64, 4 heads of 16, 2 KV heads (4 for gpt2), context 128.
  static std::string Make(const std::string& arch, const std::string& extra = "") {
    const std::string path = Path(arch + ".gguf");
    const auto r =
        RunH2o("mkmodel --arch " + arch + " --dim 64 --heads 4 --ffn 96 --vocab 300 " +
               "--ctx 128 --type f32 -t 2 " + (arch == "gpt2" ? "--kv-heads 4 " : "--kv-heads 2 ") +
               extra + " -o " + path);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  static inline std::filesystem::path dir_;
};

TEST_F(ArchCli, EveryArchitectureGenerates) {
  for (const char* arch : {"qwen2", "qwen3", "phi3", "gemma3", "gptneox", "gpt2"}) {
    SCOPED_TRACE(arch);
    const auto r = RunH2o("generate -m " + Make(arch, "--layers 2") +
                          " --tokens \"1 7 42\" -n 8 --temp 0 --print-ids --ignore-eos");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream ids(r.out);
    int n = 0;
    for (int id; ids >> id; ++n) EXPECT_TRUE(id >= 0 && id < 300) << id;
    EXPECT_EQ(n, 11);
  }
}

// Gemma 3 with 7 layers and a window of 8: layers 0-4 and 6 windowed, 5
// global.
TEST_F(ArchCli, SlidingWindowLayersKeepTheirWindow) {
  const std::string model = Make("gemma3", "--layers 7 --window 8");
  const std::string ids = Path("ids.txt");
  {
    std::ofstream out(ids);
    for (int i = 0; i < 100; ++i) out << 3 + (i * 37) % 290 << ' ';
  }
  const auto r = RunH2o("perplexity -m " + model + " --json --token-file " + ids);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = nlohmann::json::parse(r.out)["policies"][0];
  // An exact cache of 100 tokens: 100 per KV head in the global layer, the
  // window of 8 in each of the six others; K and V rows of 16 f16 values.
  const int64_t row = 16 * 2, kv_heads = 2;
  // Each slot also has its position (4 B).
  EXPECT_EQ(p["kv_bytes_full"].get<int64_t>(), kv_heads * (2 * row + 4) * (100 + 6 * 8));
  EXPECT_EQ(p["kv_full_row_bytes"].get<int64_t>(), 2 * kv_heads * row * (100 + 6 * 8));
  // The full policy: the context (128) in the global layer, the window in
  // the others, one shared chunk row per KV head; plus at most 32 bytes of
  // metadata per slot.
  const int64_t rows = kv_heads * (128 + 6 * 8 + 1);
  const int64_t slots = kv_heads * (128 + 1 + 6 * (8 + 1));
  EXPECT_GE(p["kv_bytes"].get<int64_t>(), 2 * rows * row);
  EXPECT_LE(p["kv_bytes"].get<int64_t>(), 2 * rows * row + slots * 32);

  const std::string dump = Path("dump.json");
  const auto g = RunH2o("generate -m " + model + " --tokens \"1 5 6\" -n 20 --ignore-eos " +
                        "--temp 0 --kv h2o:heavy=4,recent=4 --kv-dump " + dump);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const auto d = nlohmann::json::parse(testing::ReadFileOrEmpty(dump));
  for (int l : {0, 4, 6}) {
    const auto& layer = d["layers"][l];
    EXPECT_EQ(layer["window"], 8) << l;
    for (const auto& head : layer["heads"]) {
      EXPECT_FALSE(head.contains("scores")) << l;
      // 23 tokens seen (positions 0-22; the last generated one is not fed):
      // the window holds the last 8.
      EXPECT_EQ(head["positions"], (std::vector<int>{14, 15, 16, 17, 18, 19, 20, 21})) << l;
    }
  }
  const auto& global = d["layers"][5];
  EXPECT_FALSE(global.contains("window"));
  for (const auto& head : global["heads"]) {
    EXPECT_EQ(head["positions"].size(), 8u);  // h2o: 4 heavy + 4 recent
    EXPECT_TRUE(head.contains("scores"));
  }
}

// h2o analyze: windowed layers are marked and left out of the means (their
// attention is sparse by construction), so the paper's statistics describe
// the global layers.
TEST_F(ArchCli, AnalyzeMeansCoverTheGlobalLayers) {
  const std::string model = Make("gemma3", "--layers 7 --window 8");
  const std::string ids = Path("analyze_ids.txt");
  {
    std::ofstream out(ids);
    for (int i = 0; i < 64; ++i) out << 3 + (i * 53) % 290 << ' ';
  }
  const auto r =
      RunH2o("analyze -m " + model + " --token-file " + ids + " --json --out " + Path("analysis"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a = nlohmann::json::parse(testing::ReadFileOrEmpty(Path("analysis/analysis.json")));
  EXPECT_EQ(a["layers"][0]["window"], 8);
  EXPECT_EQ(a["layers"][5]["window"], 0);
  EXPECT_EQ(a["mean"]["over"], "global layers (window 0)");
  EXPECT_DOUBLE_EQ(a["mean"]["sparsity"].get<double>(), a["layers"][5]["sparsity"].get<double>());
  EXPECT_DOUBLE_EQ(a["mean"]["heavy_overlap"].get<double>(),
                   a["layers"][5]["heavy_overlap"].get<double>());
}

TEST_F(ArchCli, OptionsThatMakeNoSenseForTheArchitecture) {
  const std::string gpt2 = Make("gpt2", "--layers 2");
  ExpectOneErrorLine(
      RunH2o("generate -m " + gpt2 + " --tokens 1 -n 4 --kv h2o:heavy=4,recent=4 --kv-pos-shift"),
      "--kv-pos-shift re-rotates keys; gpt2 has learned positions");
  ExpectOneErrorLine(RunH2o("generate -m " + gpt2 + " -c 256 --tokens 1 -n 4"),
                     "context size 256 exceeds the 128 positions gpt2 has learned");
  ExpectOneErrorLine(RunH2o("mkmodel --arch gpt2 --rope-base 500000 -o " + Path("x.gguf")),
                     "--arch gpt2 has learned positions");
  EXPECT_FALSE(std::filesystem::exists(Path("x.gguf")));
}

}  // namespace
}  // namespace h2o
