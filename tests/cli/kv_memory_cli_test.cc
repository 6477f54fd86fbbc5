// Issue 14, item 1: generate, inspect and bench print one KV memory figure
// (kv/kv_report.h) for the same configuration, and an evicting cache that
// needs more than a full one on a short input says why.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::RunH2o;

// The text after `marker` up to the end of its line.
std::string After(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return fmt::format("<no '{}' in: {}>", marker, text);
  const size_t from = at + marker.size();
  return text.substr(from, text.find('\n', from) - from);
}

// 15 tokens each: generate's 3 prompt tokens and 12 of its 13 generated
// ones are evaluated; bench's tg15 at depth 0; inspect's -c 15. Budget 8 +
// a 1-token chunk, below the 15 tokens.
TEST(KvMemoryCli, GenerateInspectAndBenchPrintTheSameFigure) {
  const std::string kv = " --chunk 1 --kv h2o:heavy=4,recent=4 ";
  const auto gen = RunH2o("generate -m " + testing::ModelPath() + kv + "-c 64 -p hi -n 13");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto inspect = RunH2o("inspect " + testing::ModelPath() + kv + "-c 15");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  const auto bench =
      RunH2o("bench -m " + testing::ModelPath() + kv + "-p 0 -n 15 -r 1 -t 1 --membw-mib 8");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;

  const std::string line = After(gen.err, "KV cache (h2o:heavy=4,recent=4, f16): ");
  EXPECT_EQ(After(inspect.out, "KV cache (h2o:heavy=4,recent=4, f16) with chunk 1: "), line);
  EXPECT_NE(line.find("a full cache of 15 tokens needs"), std::string::npos) << line;
  EXPECT_NE(line.find(" K/V + "), std::string::npos) << line;
  EXPECT_NE(line.find("positions, scores"), std::string::npos) << line;
  // bench's cells: the allocated figure and the ratio of the same line.
  const std::string allocated = line.substr(0, line.find(") allocated"));
  const std::string row = After(bench.out, "| tg15 | 0 | h2o:heavy=4,recent=4 |");
  EXPECT_NE(row.find(fmt::format(" {}) | ", allocated.substr(0, allocated.find(';')))),
            std::string::npos)
      << row << "\nvs " << line;
  const std::string ratio = line.substr(line.rfind(": ") + 2, 5);  // "0.67x"
  EXPECT_NE(row.find(fmt::format("| {} |", ratio)), std::string::npos) << row << "\nvs " << line;
}

// A full policy is the full cache of its tokens: 1.00x in bench, never
// more (the old figure compared bookkeeping-included bytes with rows only).
TEST(KvMemoryCli, FullPolicyIsOneTimesFull) {
  const auto bench =
      RunH2o("bench -m " + testing::ModelPath() + " -p 0 -n 16 --kv full -r 1 -t 1 --membw-mib 8");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_NE(After(bench.out, "| tg16 | 0 | full |").find("| 1.00x |"), std::string::npos)
      << bench.out;
}

// Budget 16 on 5 tokens (generate) or 16 (bench): nothing to evict, so the
// scores make the cache larger than a full one, and the line says so.
TEST(KvMemoryCli, EvictingCacheOverFullOnAShortInputSaysWhy) {
  const std::string kv = " --kv h2o:heavy=8,recent=8 ";
  const auto gen = RunH2o("generate -m " + testing::ModelPath() + kv + "-p hi -n 3");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_NE(gen.err.find("x (budget 16 > 5 tokens: a full cache of the same tokens is smaller)"),
            std::string::npos)
      << gen.err;
  const auto bench =
      RunH2o("bench -m " + testing::ModelPath() + kv + "-p 0 -n 16 -r 1 -t 1 --membw-mib 8");
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_NE(
      bench.out.find("x (budget 16 = 16 tokens: a full cache of the same tokens is smaller) |"),
      std::string::npos)
      << bench.out;
}

}  // namespace
}  // namespace h2o
