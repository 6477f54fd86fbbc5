// Quantized K/V through the real binary, on random-weight models of every
// architecture (the bundled stories260K has 8-wide heads, which the block
// types refuse): a q8_0 cache moves each policy's next-token distribution
// by at most 1e-3 nats of KL beyond what the policy itself does (issue 17's
// target), K and V types differ freely, and bad types are one error line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
using testing::RunH2o;

class KvTypesCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("h2o_kv_types_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // Two streams of 160 random ids of the 300-token vocabulary.
    std::mt19937 rng(5);
    std::ofstream ids(Path("ids.txt"));
    for (int line = 0; line < 2; ++line) {
      for (int i = 0; i < 160; ++i) ids << (i ? " " : "") << 3 + rng() % 297;
      ids << "\n";
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string Path(const std::string& name) { return (dir_ / name).string(); }

  // 4 heads of 32 (2 KV heads; gpt2 has no GQA), 3 layers, context 256;
  // --sharpen spreads the logits so that a KL of 1e-3 is a real change.
  static std::string Make(const std::string& arch) {
    const std::string path = Path(arch + ".gguf");
    if (std::filesystem::exists(path)) return path;
    const auto r = RunH2o("mkmodel --arch " + arch +
                          " --dim 128 --heads 4 --layers 3 --ffn 192 --vocab 300 --ctx 256 "
                          "--type f32 --sharpen 4 -t 2 " +
                          (arch == "gpt2" ? "--kv-heads 4" : "--kv-heads 2") + " -o " + path);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  static inline std::filesystem::path dir_;
};

// KL(full f16 || policy at type) per (policy, type), from one perplexity
// run: every policy at every type in lockstep, the reference the f16 full
// cache (the first --kv-type's).
std::map<std::pair<std::string, std::string>, double> KlByPolicyAndType(const std::string& model,
                                                                        const std::string& ids) {
  const auto r = RunH2o("perplexity -m " + model +
                        " --kv full,h2o:heavy=20%,recent=20%,local:recent=40% "
                        "--kv-type f16,q8_0,q4_0 -b 16 -t 2 --json --token-file " + ids);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::pair<std::string, std::string>, double> kl;
  const nlohmann::json result = nlohmann::json::parse(r.out);
  for (const auto& row : result["policies"]) {
    kl[{row["policy"], row["kv_type"]}] = row["kl"].get<double>();
  }
  EXPECT_EQ(kl.size(), 9u);
  return kl;
}

TEST_F(KvTypesCli, Q8_0MovesEveryPolicyByAtMost1e3NatsOfKl) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "phi3", "gemma3", "gptneox", "gpt2"}) {
    SCOPED_TRACE(arch);
    const auto kl = KlByPolicyAndType(Make(arch), Path("ids.txt"));
    for (const char* policy : {"full", "h2o", "local"}) {
      const double f16 = kl.at({policy, "f16"});
      const double q8 = kl.at({policy, "q8_0"});
      const double q4 = kl.at({policy, "q4_0"});
      EXPECT_LE(std::fabs(q8 - f16), 1e-3) << policy;
      std::printf("[ kl       ] %-7s %-5s f16 %.6f  q8_0 %.6f  q4_0 %.6f\n", arch, policy, f16, q8,
                  q4);
    }
    // The quantized caches did run: the full cache at q8_0 and q4_0 is not
    // the f16 reference, and 4 bits move it further than 8.
    EXPECT_EQ(kl.at({"full", "f16"}), 0.0);
    EXPECT_GT(kl.at({"full", "q8_0"}), 0.0);
    EXPECT_GT(kl.at({"full", "q4_0"}), kl.at({"full", "q8_0"}));
  }
}

// --kv-pos-shift re-rotates keys from their stored values: a q8_0 key is
// widened, then rotated to its rank, and stays as close to f16 as above.
TEST_F(KvTypesCli, PosShiftRerotatesQuantizedKeys) {
  const auto r = RunH2o("perplexity -m " + Make("llama") +
                        " --kv h2o:heavy=16,recent=16 --kv-pos-shift --kl --kv-type f16,q8_0 -b 16 "
                        "-t 2 --json --token-file " + Path("ids.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json result = nlohmann::json::parse(r.out);
  ASSERT_EQ(result["policies"].size(), 2u);
  const double f16 = result["policies"][0]["kl"].get<double>();
  const double q8 = result["policies"][1]["kl"].get<double>();
  EXPECT_EQ(result["policies"][1]["kv_type"], "q8_0");
  EXPECT_GT(f16, 0.0);  // eviction happened: 32 of 160 tokens kept
  EXPECT_NE(q8, f16);
  EXPECT_LE(std::fabs(q8 - f16), 1e-3);
}

// A type sweep's report: rows labelled with their type, memory as a metric
// and each metric plotted against it, one curve per policy and type.
TEST_F(KvTypesCli, PerplexityReportPlotsQualityAgainstKvMemory) {
  const std::string prefix = Path("sweep");
  const auto r = RunH2o("perplexity -m " + Make("llama") +
                        " --kv full,h2o:heavy=16,recent=16 --kv-type f16,q4_0 -b 16 -t 2 --out " +
                        prefix + " --token-file " + Path("ids.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| h2o:heavy=16,recent=16 (q4_0) |"), std::string::npos) << r.out;
  std::ifstream csv(prefix + ".csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "policy,budget,kv,ppl,kl,top1,kv_mib");
  for (const char* plot : {".ppl-vs-kv_mib.svg", ".kl-vs-kv_mib.svg", ".top1-vs-kv_mib.svg"}) {
    std::ifstream svg(prefix + plot);
    ASSERT_TRUE(svg.good()) << plot;
    const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("h2o q4_0"), std::string::npos) << plot;
    EXPECT_NE(text.find("full f16"), std::string::npos) << plot;
  }
  // In the JSON, q4_0's h2o row holds fewer KV bytes than f16's.
  const auto json = nlohmann::json::parse(std::ifstream(prefix + ".json"));
  EXPECT_LT(json["rows"][3]["values"]["kv_mib"].get<double>(),
            json["rows"][1]["values"]["kv_mib"].get<double>());
}

TEST_F(KvTypesCli, KAndVTypesDifferAndTheMemoryLineSaysSo) {
  const std::string model = Make("llama");
  const auto r = RunH2o("generate -m " + model +
                        " --tokens \"1 7 42\" -n 6 --temp 0 --ignore-eos -ctk q8_0 -ctv q4_1 "
                        "--kv h2o:heavy=4,recent=4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("KV cache (h2o:heavy=4,recent=4, K q8_0, V q4_1)"), std::string::npos)
      << r.err;
  // The same with --kv-type-k/--kv-type-v, llama.cpp's long names too.
  const auto same = RunH2o("generate -m " + model +
                           " --tokens \"1 7 42\" -n 6 --temp 0 --ignore-eos --kv-type-k q8_0 "
                           "--cache-type-v q4_1 --kv h2o:heavy=4,recent=4");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out, r.out);
}

TEST_F(KvTypesCli, BadTypesAreOneErrorLine) {
  const std::string model = Make("llama");
  ExpectUsageError(RunH2o("generate -m " + model + " -p hi -ctk q4_K"),
                   "h2o: error: --kv-type-k/--cache-type-k: 'q4_K' is not allowed (one of: "
                   "f32,f16,bf16,q8_0,q4_0,q4_1,q5_0,q5_1)");
  ExpectUsageError(RunH2o("perplexity -m " + model + " --kv-type f16,q9 --token-file x"),
                   "h2o: error: --kv-type: unknown KV cache type 'q9' (valid: f32, f16, bf16, "
                   "q8_0, q4_0, q4_1, q5_0, q5_1)");
  // Heads of 8 cannot hold 32-value blocks.
  ExpectOneErrorLine(RunH2o("generate -m " + testing::ModelPath() + " -p hi -ctv q5_0"),
                     "V cache type q5_0 needs heads whose size is a multiple of 32; this model's "
                     "heads have 8 (use f16, bf16 or f32)");
  ExpectOneErrorLine(RunH2o("inspect " + testing::ModelPath() + " -ctk q8_0"),
                     "K cache type q8_0 needs heads whose size is a multiple of 32");
  // The server refuses before it listens; a type sweep names the type.
  ExpectOneErrorLine(RunH2o("serve -m " + testing::ModelPath() + " --port 1 -ctv q4_0"),
                     "V cache type q4_0 needs heads");
  ExpectOneErrorLine(RunH2o("perplexity -m " + testing::ModelPath() +
                            " --kv-type f16,q5_1 --token-file " + Path("ids.txt")),
                     "K cache type q5_1 needs heads");
}

}  // namespace
}  // namespace h2o
