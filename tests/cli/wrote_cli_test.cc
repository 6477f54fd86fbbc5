// Every command that writes files says so: one "wrote PATH" line on stderr
// per file, for exactly the files it left in place (none with -q).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::RunH2o;

const std::string kModel = testing::ModelPath();
const std::string kS001 = testing::DataPath("stories260K/streams/s001.txt");

// Each test writes into a directory of its own, so the files it leaves are
// exactly those the command wrote.
class WroteCli : public ::testing::Test {
 protected:
  WroteCli() { std::filesystem::create_directories(dir_); }
  ~WroteCli() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // The files under the directory (recursively), as paths.
  std::set<std::string> Files() const {
    std::set<std::string> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_)) {
      if (e.is_regular_file()) files.insert(e.path().string());
    }
    return files;
  }

  // Runs `args` and expects its "wrote" lines to name exactly the files it
  // left under the directory, each once; returns those paths.
  std::set<std::string> ExpectWroteEachFile(const std::string& args) {
    const auto r = RunH2o(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> wrote;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("wrote ", 0) != 0) continue;
      // mkmodel adds ": what it wrote" after the path.
      const std::string path = line.substr(6, line.find(": ", 6) - 6);
      EXPECT_TRUE(wrote.insert(path).second) << "twice: " << path;
    }
    EXPECT_EQ(wrote, Files()) << r.err;
    return wrote;
  }

  const std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() /
      ("h2o_wrote_" + std::to_string(::getpid()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

TEST_F(WroteCli, PerplexitySweepReportAndKvDump) {
  const std::set<std::string> wrote = ExpectWroteEachFile(
      "perplexity -m " + kModel + " -t 1 --token-file " + kS001 +
      " --kv full,local,h2o --budget 20% --out " + Path("sweep"));
  EXPECT_EQ(wrote.size(), 6u);  // md, csv, json, and a plot of ppl, kl, top1
  EXPECT_EQ(wrote.count(Path("sweep.kl.svg")), 1u);
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  EXPECT_EQ(ExpectWroteEachFile("perplexity -m " + kModel + " -t 1 --token-file " + kS001 +
                                " --kv h2o:heavy=8,recent=8 --kv-dump " + Path("dump.json")),
            std::set<std::string>{Path("dump.json")});
}

TEST_F(WroteCli, GenerateKvDump) {
  EXPECT_EQ(ExpectWroteEachFile("generate -m " + kModel + " -t 1 --tokens \"1 2 3\" -n 4 "
                                "--temp 0 --kv h2o:heavy=2,recent=2 --kv-dump " +
                                Path("dump.json")),
            std::set<std::string>{Path("dump.json")});
}

TEST_F(WroteCli, EvalReportHasNoPlotOfAStandardError) {
  const std::set<std::string> wrote = ExpectWroteEachFile(
      "eval -m " + kModel + " -t 1 --task " + testing::DataPath("tinystories_cloze_56.jsonl") +
      " --limit 4 --kv full,h2o --budget 50% --report " + Path("cloze"));
  // md, csv, json, acc (PREFIX.svg) and acc_norm; the stderrs are error bars.
  EXPECT_EQ(wrote, (std::set<std::string>{Path("cloze.md"), Path("cloze.csv"), Path("cloze.json"),
                                          Path("cloze.svg"), Path("cloze.acc_norm.svg")}));
  EXPECT_NE(testing::ReadFileOrEmpty(Path("cloze.svg")).find("class=\"error-bar\""),
            std::string::npos);
  EXPECT_NE(testing::ReadFileOrEmpty(Path("cloze.svg"))
                .find("KV cache budget (% of each item&apos;s prompt tokens)"),
            std::string::npos);
}

TEST_F(WroteCli, EvalOutOfASummarization) {
  EXPECT_EQ(ExpectWroteEachFile("eval -m " + kModel + " -t 1 --task " +
                                testing::DataPath("xsum_0shot_10.jsonl") +
                                " --generate --limit 1 -c 200 --temp 0 --kv full --out " +
                                Path("xsum.jsonl")),
            std::set<std::string>{Path("xsum.jsonl")});
}

TEST_F(WroteCli, EvalOutOfScoredRequests) {
  const std::string task = ::testing::TempDir() + "h2o_wrote_requests.jsonl";
  std::ofstream(task) << nlohmann::json{{"best_of", 1},
                                        {"echo", true},
                                        {"logprobs", 1},
                                        {"max_tokens", 0},
                                        {"model", "x"},
                                        {"n", 1},
                                        {"prompt", "Once upon a time"},
                                        {"request_type", "language-model-inference"},
                                        {"stop", nullptr},
                                        {"temperature", 0},
                                        {"top_p", 1}}
                             .dump()
                      << "\n";
  EXPECT_EQ(ExpectWroteEachFile("eval -m " + kModel + " -t 1 --task " + task + " --out " +
                                Path("results.jsonl")),
            std::set<std::string>{Path("results.jsonl")});
  std::filesystem::remove(task);
}

TEST_F(WroteCli, AnalyzeConvertAndMkmodel) {
  const std::string out = Path("analysis");
  EXPECT_EQ(ExpectWroteEachFile("analyze -m " + kModel + " -t 1 --token-file " + kS001 +
                                " --out " + out),
            (std::set<std::string>{out + "/analysis.json", out + "/sparsity.svg",
                                   out + "/power_law.svg", out + "/heavy_overlap.svg"}));
  std::filesystem::remove_all(out);
  EXPECT_EQ(ExpectWroteEachFile("convert llama2c " + std::string(H2O_MODELS_DIR) +
                                "/stories260K.bin --tokenizer " + std::string(H2O_MODELS_DIR) +
                                "/tok512.bin -o " + Path("c.gguf")),
            std::set<std::string>{Path("c.gguf")});
  std::filesystem::remove(Path("c.gguf"));
  EXPECT_EQ(ExpectWroteEachFile("mkmodel --dim 64 --layers 1 --heads 2 --kv-heads 2 --ffn 128 "
                                "--vocab 300 --type f32 -o " +
                                Path("m.gguf")),
            std::set<std::string>{Path("m.gguf")});
}

TEST_F(WroteCli, QuietSaysNothing) {
  const auto r = RunH2o("perplexity -m " + kModel + " -t 1 -q --token-file " + kS001 +
                        " --kv h2o:heavy=8,recent=8 --kv-dump " + Path("dump.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(Path("dump.json")));
  EXPECT_EQ(r.err.find("wrote"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace h2o
