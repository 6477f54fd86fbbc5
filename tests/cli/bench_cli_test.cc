// `h2o bench` as a user runs it: JSON and markdown output of the real
// binary on stories260K, and one error line for each kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::RunH2o;

const std::string kBench = "bench -m " + testing::ModelPath() + " --membw-mib 8 ";

TEST(BenchCli, JsonRecords) {
  // --chunk 8 so that the h2o cache (budget 16 + chunk 8 slots) is smaller
  // than the full one at these short lengths; with the default chunk of 512
  // both would be capped at the sequence length.
  const auto r = RunH2o(kBench +
                        "-p 16 -n 8 --depth 0,32 --kv full,h2o:heavy=8,recent=8 -r 2 -t 2 "
                        "--chunk 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], testing::ModelPath());
  ASSERT_TRUE(j["membw_gbps"].is_number());
  EXPECT_GT(j["membw_gbps"].get<double>(), 0.0);
  EXPECT_EQ(j["threads"], 2);
  const auto& records = j["records"];
  ASSERT_EQ(records.size(), 8u);  // 2 kv x 2 depths x (pp16, tg8)

  // (kv, depth, test) -> record
  std::map<std::tuple<std::string, int, std::string>, nlohmann::json> by_key;
  for (const auto& rec : records) {
    EXPECT_GT(rec["tps_min"].get<double>(), 0.0) << rec.dump();
    EXPECT_GE(rec["tps_median"].get<double>(), rec["tps_min"].get<double>());
    EXPECT_EQ(rec["tps"].size(), 2u);
    EXPECT_EQ(rec["threads"], 2);
    EXPECT_GT(rec["peak_rss_bytes"].get<double>(), 0.0);
    const bool tg = rec["test"] == "tg8";
    EXPECT_TRUE(tg || rec["test"] == "pp16") << rec.dump();
    EXPECT_EQ(rec["achieved_gbps"].is_number(), tg) << rec.dump();
    EXPECT_EQ(rec["roofline_tps"].is_number(), tg) << rec.dump();
    by_key[{rec["kv"], rec["depth"], rec["test"]}] = rec;
  }
  EXPECT_EQ(by_key.size(), 8u);
  // stories260K: 5 layers x 4 KV heads, head_dim 8, f16. A slot is 40 B
  // (K, V, position, free list), 48 B with h2o's score. At depth 32:
  //   pp16: full 48 slots; h2o budget 16 + chunk 8 = 24 slots.
  //   tg8:  full 40 slots; h2o 24 slots.
  // h2o's K/V rows (32 B a slot) are its 16-token budget per (layer, KV
  // head) plus one 8-token chunk per KV head shared by all layers.
  constexpr int64_t kH2oBytes = 20 * 16 * 32 + 4 * 8 * 32 + 20 * 24 * 16;
  const auto& full_pp = by_key[{"full", 32, "pp16"}];
  const auto& h2o_pp = by_key[{"h2o:heavy=8,recent=8", 32, "pp16"}];
  const auto& full_tg = by_key[{"full", 32, "tg8"}];
  const auto& h2o_tg = by_key[{"h2o:heavy=8,recent=8", 32, "tg8"}];
  EXPECT_EQ(full_pp["kv_bytes"], 20 * 48 * 40);
  EXPECT_EQ(h2o_pp["kv_bytes"], kH2oBytes);
  EXPECT_EQ(full_tg["kv_bytes"], 20 * 40 * 40);
  EXPECT_EQ(h2o_tg["kv_bytes"], kH2oBytes);
  EXPECT_LT(h2o_pp["kv_bytes"].get<int64_t>(), full_pp["kv_bytes"].get<int64_t>());
  EXPECT_LT(h2o_tg["kv_bytes"].get<int64_t>(), full_tg["kv_bytes"].get<int64_t>());
  // The full cache of the same tokens is counted as the session's own (K,
  // V, position, free list): a full policy is exactly it.
  EXPECT_EQ(full_pp["kv_bytes_full"], full_pp["kv_bytes"]);
  EXPECT_EQ(full_pp["kv_full_row_bytes"], 2 * 20 * 48 * 16);
  EXPECT_EQ(h2o_tg["kv_resolved"], "h2o:heavy=8,recent=8");
  // h2o decode reads fewer KV bytes per token than full at depth 32.
  EXPECT_LT(h2o_tg["bytes_per_token"].get<double>(), full_tg["bytes_per_token"].get<double>());
}

TEST(BenchCli, MarkdownTableAndPercentSpecs) {
  const auto r = RunH2o(kBench +
                        "-p 8 -n 4 --depth 16 --kv full --kv h2o:heavy=25%,recent=25% "
                        "-r 1 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| model | type / size | threads | test | depth | kv | t/s (min) |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("|---|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory bandwidth: "), std::string::npos) << r.out;
  // 25% of 16 + 8 = 6 for pp8, of 16 + 4 = 5 for tg4.
  EXPECT_NE(r.out.find("| pp8 | 16 | h2o:heavy=25%,recent=25% (= h2o:heavy=6,recent=6) |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| tg4 | 16 | h2o:heavy=25%,recent=25% (= h2o:heavy=5,recent=5) |"),
            std::string::npos)
      << r.out;
  // 2 specs x 2 tests: rows that start with "| stories260K.gguf".
  size_t rows = 0;
  for (size_t at = 0; (at = r.out.find("\n| stories260K.gguf |", at)) != std::string::npos; ++at) {
    ++rows;
  }
  EXPECT_EQ(rows, 4u) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // no progress lines when stderr is not a terminal
}

TEST(BenchCli, Errors) {
  ExpectOneErrorLine(RunH2o(kBench + "-p 16,x"), "-p: 'x' is not a non-negative integer");
  ExpectOneErrorLine(RunH2o(kBench + "--n-gen=-1"), "-n: '-1'");
  ExpectOneErrorLine(RunH2o(kBench + "--depth 0,,32"), "--depth: ''");
  ExpectOneErrorLine(RunH2o(kBench + "--kv full,bogus:k=1"), "--kv 'bogus:k=1'");
  ExpectOneErrorLine(RunH2o(kBench + "--kv heavy=8,full"), "before any policy");
  ExpectOneErrorLine(RunH2o(kBench + "--kv 'h2o:heavy=8,recent=8,colour=3'"),
                     "--kv 'h2o:heavy=8,recent=8,colour=3'");
  ExpectOneErrorLine(RunH2o(kBench + "-p 4 -n 0 --kv h2o:heavy=10%,recent=10%"),
                     "h2o:heavy=10%,recent=10%");
  ExpectOneErrorLine(RunH2o(kBench + "-p 0 -n 0"), "nothing to run");
  ExpectOneErrorLine(RunH2o(kBench + "--kv-type q8_0"), "--kv-type");
  ExpectOneErrorLine(RunH2o("bench -m /nonexistent/model.gguf -p 4 -n 4"),
                     "/nonexistent/model.gguf");
  ExpectOneErrorLine(RunH2o(kBench + "-r 0"), "-r must be at least 1, not 0");
  ExpectOneErrorLine(RunH2o(kBench + "--threads=-2"), "-t must be 0 (all) or more, not -2");
  ExpectOneErrorLine(RunH2o(kBench + "--kv h2o:heavy=8"), "--kv 'h2o:heavy=8': missing key");
}

}  // namespace
}  // namespace h2o

namespace h2o {
namespace {

// --concurrency: a KV memory limit with room for two full caches of 48 + 16
// tokens (stories260K: 5 layers x 4 KV heads x 2 rows of 8 f16 values = 320
// bytes per token, plus per-slot metadata) admits two full sequences at a
// time, and more of a small local window; every request generates exactly
// -n tokens.
TEST(BenchThroughputCli, AdmitsByKvMemoryAndGeneratesEveryToken) {
  const auto r = RunH2o(kBench +
                        "--concurrency 6 -p 48 -n 16 --chunk 16 -t 2 --kv full,local:recent=8 "
                        "--kv-mem 50KiB --batch-tokens 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "throughput");
  EXPECT_EQ(j["kv_memory_bytes"], 50 * 1024);
  EXPECT_EQ(j["batch_tokens"], 16);  // raised to --chunk
  ASSERT_EQ(j["records"].size(), 2u);
  const auto& full = j["records"][0];
  const auto& local = j["records"][1];
  const int64_t full_bytes = full["kv_bytes_per_sequence"].get<int64_t>();
  const int64_t local_bytes = local["kv_bytes_per_sequence"].get<int64_t>();
  EXPECT_GE(full_bytes, 64 * 320);  // 64 tokens of K/V rows
  EXPECT_EQ(full["admitted"], std::min<int64_t>(6, 50 * 1024 / full_bytes));
  EXPECT_EQ(local["admitted"], std::min<int64_t>(6, 50 * 1024 / local_bytes));
  EXPECT_GT(local["admitted"].get<int>(), full["admitted"].get<int>());
  for (const auto& rec : j["records"]) {
    EXPECT_EQ(rec["generated"], 6 * 16);
    EXPECT_GT(rec["decode_tps"].get<double>(), 0.0);
    EXPECT_GT(rec["end_to_end_tps"].get<double>(), 0.0);
    EXPECT_LE(rec["ttft_p50_ms"].get<double>(), rec["ttft_p99_ms"].get<double>());
    EXPECT_LE(rec["itl_p50_ms"].get<double>(), rec["itl_p99_ms"].get<double>());
  }
}

// --kv-mem-full 2 --fill: the memory of two full caches, and each policy
// gets as many requests as that memory holds at once.
TEST(BenchThroughputCli, FillsTheMemoryOfNFullCaches) {
  const auto r = RunH2o(kBench +
                        "--fill --kv-mem-full 2 -p 48 -n 16 --chunk 16 -t 2 "
                        "--kv full,local:recent=8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["concurrency"], "fill");
  ASSERT_EQ(j["records"].size(), 2u);
  const auto& full = j["records"][0];
  const auto& local = j["records"][1];
  const int64_t memory = j["kv_memory_bytes"].get<int64_t>();
  EXPECT_EQ(memory, 2 * full["kv_bytes_per_sequence"].get<int64_t>());
  EXPECT_EQ(full["requests"], 2);
  EXPECT_EQ(full["admitted"], 2);
  const int64_t local_fit = memory / local["kv_bytes_per_sequence"].get<int64_t>();
  EXPECT_GT(local_fit, 2);
  EXPECT_EQ(local["requests"], local_fit);
  EXPECT_EQ(local["admitted"], local_fit);
  EXPECT_EQ(local["generated"], local_fit * 16);
}

TEST(BenchThroughputCli, BadInputIsOneLine) {
  ExpectOneErrorLine(RunH2o(kBench + "--concurrency 4 -p 16,32 -n 8"),
                     "--concurrency takes one -p and one -n");
  ExpectOneErrorLine(RunH2o(kBench + "--concurrency 4 -p 16 -n 8 --depth 32"),
                     "--concurrency runs from an empty cache");
  ExpectOneErrorLine(RunH2o(kBench + "--concurrency 4 -p 16 -n 8 --kv-mem 2parsecs"),
                     "--kv-mem: '2parsecs' has an unknown unit");
  ExpectOneErrorLine(RunH2o(kBench + "--concurrency 4 -p 16 -n 8 --kv-mem 1KiB"),
                     "larger than the whole KV memory limit");
  ExpectOneErrorLine(RunH2o(kBench + "--concurrency -2 -p 16 -n 8"),
                     "--concurrency must be 1 or more");
  ExpectOneErrorLine(RunH2o(kBench + "--concurrency 4 -p 16 -n 8 --batch-tokens 0"),
                     "--batch-tokens must be 1 or more");
  ExpectOneErrorLine(RunH2o(kBench + "--fill -p 16 -n 8 --kv-mem-full -1"),
                     "--kv-mem-full must be 1 or more");
  ExpectOneErrorLine(RunH2o(kBench + "--fill -p 16 -n 8 --depth 32"),
                     "--concurrency runs from an empty cache");
}

}  // namespace
}  // namespace h2o
