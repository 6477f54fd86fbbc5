// Warnings instead of silently changing the experiment (issue 14 item 5),
// word for word, and output paths checked before a run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;
using testing::RunResult;

const std::string kModel = testing::ModelPath();
const std::string kGenerate = "generate -m " + kModel + " -n 4 --temp 0 -q ";
const std::string kStream = testing::DataPath("stories260K/streams/s001.txt");

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// "Once upon a time" is 5 tokens with BOS, and -n 4 makes the sequence 9:
// 10% of 9 floors to 0.
TEST(CliWarnings, PercentBudgetsOverAHundredOrRoundingToZero) {
  const RunResult r = RunH2o(kGenerate + "-p 'Once upon a time' --kv h2o:heavy=150%,recent=10%");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "h2o: warning: --kv: 'heavy=150%' in h2o:heavy=150%,recent=10% is more than the "
            "whole sequence\n"
            "h2o: warning: --kv: 'recent=10%' in h2o:heavy=150%,recent=10% is 0 tokens for a "
            "9-token sequence, so the policy runs without its recent part\n");
  // 40% of 9 is 3: nothing to say.
  EXPECT_EQ(RunH2o(kGenerate + "-p 'Once upon a time' --kv h2o:heavy=40%,recent=40%").err, "");
}

TEST(CliWarnings, ContextBeyondTrainingAndMoreThreadsThanCores) {
  const RunResult c = RunH2o(kGenerate + "-p hi -c 4096");
  EXPECT_EQ(c.exit_code, 0);
  EXPECT_EQ(c.err,
            "h2o: warning: -c 4096 is beyond the 512 tokens the model was trained on: quality "
            "past them is not what the model was made for\n");
  EXPECT_EQ(RunH2o(kGenerate + "-p hi -c 512").err, "");
  const unsigned cores = std::thread::hardware_concurrency();
  const std::string more = std::to_string(cores + 1);
  const RunResult t = RunH2o(kGenerate + "-p hi -t " + more);
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_EQ(t.err, "h2o: warning: -t " + more + " is more threads than the " +
                       std::to_string(cores) +
                       " this machine runs at once: they will take turns, which is slower\n");
  EXPECT_EQ(RunH2o(kGenerate + "-p hi -t " + std::to_string(cores)).err, "");
}

TEST(CliWarnings, BenchDepthBeyondTraining) {
  const std::string bench = "bench -m " + kModel + " -p 4 -n 0 -r 1 --no-warmup --membw-mib 0 ";
  const RunResult r = RunH2o(bench + "-d 512");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "h2o: warning: --depth + test tokens reach 516, beyond the 512 tokens the model "
            "was trained on\n");
  EXPECT_EQ(RunH2o(bench + "-d 508").err, "");
}

TEST(CliWarnings, PerTokenWithoutJson) {
  const std::string ppl = "perplexity -m " + kModel + " --token-file " + kStream + " -q ";
  const RunResult r = RunH2o(ppl + "--per-token");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "h2o: warning: --per-token lists each token's nll in --json output only\n");
  EXPECT_EQ(RunH2o(ppl + "--per-token --json").err, "");
}

// s001 is 255 tokens; a chunk of 512 scores it in one pass.
TEST(CliWarnings, ChunkCoveringTheWholeInputOfAnEvictingPolicy) {
  const std::string ppl = "perplexity -m " + kModel + " --token-file " + kStream + " -q ";
  const RunResult r = RunH2o(ppl + "--kv full,h2o:heavy=8,recent=8 -b 512");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "h2o: warning: -b/--chunk 512 covers the whole")) << r.err;
  EXPECT_TRUE(Has(r.err, "so 'h2o:heavy=8,recent=8' gives what the full cache gives")) << r.err;
  EXPECT_FALSE(Has(r.err, "'full' gives")) << r.err;
  EXPECT_EQ(RunH2o(ppl + "--kv full,h2o:heavy=8,recent=8 -b 16").err, "");
}

TEST(CliWarnings, OutputPathsAreCheckedBeforeTheRun) {
  ExpectOneErrorLine(RunH2o(kGenerate + "-p hi --kv-dump /nonexistent_dir/kv.json"),
                     "--kv-dump /nonexistent_dir/kv.json: directory /nonexistent_dir does not "
                     "exist");
  ExpectOneErrorLine(RunH2o(kGenerate + "-p hi --kv-dump /tmp"),
                     "--kv-dump /tmp: is a directory, not a file");
  ExpectOneErrorLine(RunH2o("perplexity -m " + kModel + " --token-file " + kStream +
                            " --out /nonexistent_dir/ppl"),
                     "--report /nonexistent_dir/ppl.json: directory /nonexistent_dir does not exist");
  const std::string task = testing::DataPath("tinystories_cloze_56.jsonl");
  ExpectOneErrorLine(RunH2o("eval -m " + kModel + " --task " + task + " --report /nonexistent_dir/r"),
                     "--report /nonexistent_dir/r.json: directory /nonexistent_dir does not exist");
}

}  // namespace
}  // namespace h2o
