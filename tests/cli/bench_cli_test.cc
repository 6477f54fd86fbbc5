// `h2o bench` as a user runs it: JSON and markdown output of the real
// binary on stories260K, and one error line for each kind of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "cli/run_binary.h"
#include "test_data.h"

namespace h2o {
namespace {

using testing::ExpectOneErrorLine;
using testing::ExpectUsageError;
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
  // stories260K: 5 layers x 4 KV heads, head_dim 8, f16. A slot is 36 B
  // (K, V, position), 44 B with h2o's score. At depth 32:
  //   pp16: full 48 slots; h2o budget 16 + chunk 8 = 24 slots.
  //   tg8:  full 40 slots; h2o 24 slots.
  // h2o's K/V rows (32 B a slot) are its 16-token budget per (layer, KV
  // head) plus one 8-token chunk per KV head shared by all layers, and one
  // freed-slot index (4 B) per slot of each KV head's chunk.
  constexpr int64_t kH2oBytes = 20 * 16 * 32 + 4 * 8 * 32 + 20 * 24 * 12 + 4 * 8 * 4;
  const auto& full_pp = by_key[{"full", 32, "pp16"}];
  const auto& h2o_pp = by_key[{"h2o:heavy=8,recent=8", 32, "pp16"}];
  const auto& full_tg = by_key[{"full", 32, "tg8"}];
  const auto& h2o_tg = by_key[{"h2o:heavy=8,recent=8", 32, "tg8"}];
  EXPECT_EQ(full_pp["kv_bytes"], 20 * 48 * 36);
  EXPECT_EQ(h2o_pp["kv_bytes"], kH2oBytes);
  EXPECT_EQ(full_tg["kv_bytes"], 20 * 40 * 36);
  EXPECT_EQ(h2o_tg["kv_bytes"], kH2oBytes);
  EXPECT_LT(h2o_pp["kv_bytes"].get<int64_t>(), full_pp["kv_bytes"].get<int64_t>());
  EXPECT_LT(h2o_tg["kv_bytes"].get<int64_t>(), full_tg["kv_bytes"].get<int64_t>());
  // The full cache of the same tokens is counted as the session's own (K,
  // V, position): a full policy is exactly it.
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
  EXPECT_NE(r.out.find("| model | type / size | threads | test | depth | kv | t/s (median) | "
                       "t/s (min..max) | KV bytes | KV vs full | peak RSS | GB/s | roofline |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("t/s: the median and the range of 1 timed run per test, after one "
                       "untimed warm-up run; peak RSS: the process's peak resident memory"),
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

// The cells of a markdown row ("| a | b |" -> {"a", "b"}).
std::vector<std::string> RowCells(const std::string& row) {
  std::vector<std::string> cells;
  size_t at = row.find("| ");
  while (at != std::string::npos) {
    const size_t end = row.find(" |", at + 2);
    if (end == std::string::npos) break;
    cells.push_back(row.substr(at + 2, end - at - 2));
    at = row.find("| ", end + 1);
  }
  return cells;
}

// The table's rows: the lines that start with "| stories260K.gguf |".
std::vector<std::vector<std::string>> TableRows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  size_t begin = 0;
  while (begin < out.size()) {
    size_t end = out.find('\n', begin);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(begin, end - begin);
    if (line.starts_with("| stories260K.gguf |")) rows.push_back(RowCells(line));
    begin = end + 1;
  }
  return rows;
}

// "2.50 MiB" -> bytes.
double ParseBytes(const std::string& text) {
  const size_t space = text.find(' ');
  if (space == std::string::npos) return -1;
  const std::string unit = text.substr(space + 1);
  const double value = std::stod(text.substr(0, space));
  const std::map<std::string, double> scale = {
      {"B", 1}, {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024}};
  const auto it = scale.find(unit);
  return it == scale.end() ? -1 : value * it->second;
}

// Every row: the median lies in min..max, and peak RSS is a size above the
// model file's (stories260K is 1.1 MiB, all of it read to run).
TEST(BenchCli, MedianRangeAndPeakRssColumns) {
  const auto r = RunH2o(kBench + "-p 8 -n 4 --depth 0,8 -r 3 -t 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = TableRows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 13u) << r.out;
    const double median = std::stod(row[6]);
    const size_t dots = row[7].find("..");
    ASSERT_NE(dots, std::string::npos) << row[7];
    const double lo = std::stod(row[7].substr(0, dots));
    const double hi = std::stod(row[7].substr(dots + 2));
    EXPECT_GT(lo, 0.0);
    EXPECT_LE(lo, median);
    EXPECT_LE(median, hi);
    EXPECT_GT(ParseBytes(row[10]), 1.1 * 1024 * 1024) << row[10];
  }
}

// A percent budget is 0 tokens at depth 0 (10% of 4) but not at depth 32
// (10% of 36): that one cell is skipped with a note, the others run.
TEST(BenchCli, SkipsAnInvalidCell) {
  const std::string args = "-p 4 -n 0 --depth 0,32 --kv full,h2o:heavy=10%,recent=10% -r 1 -t 1";
  const auto r = RunH2o(kBench + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "h2o: note: skipping --kv 'h2o:heavy=10%,recent=10%' for pp4 at depth 0 (4 tokens): "
            "KV budget must be at least 1 token (h2o:heavy=10%,recent=10% gives 0 for a 4-token "
            "sequence)\n");
  const auto rows = TableRows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  // full at 0 and 32, then h2o at 0 (skipped) and 32.
  EXPECT_EQ(rows[0][5], "full");
  EXPECT_GT(std::stod(rows[0][6]), 0.0);
  EXPECT_EQ(rows[2][3], "pp4");
  EXPECT_EQ(rows[2][4], "0");
  EXPECT_EQ(rows[2][5], "h2o:heavy=10%,recent=10%");
  EXPECT_EQ(rows[2][6], "skipped");
  EXPECT_EQ(rows[3][4], "32");
  EXPECT_EQ(rows[3][5], "h2o:heavy=10%,recent=10% (= h2o:heavy=3,recent=3)");
  EXPECT_GT(std::stod(rows[3][6]), 0.0);

  const auto j = RunH2o(kBench + args + " -o json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto records = nlohmann::json::parse(j.out)["records"];
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[2]["skipped"], true);
  EXPECT_EQ(records[2]["depth"], 0);
  EXPECT_EQ(records[2]["kv"], "h2o:heavy=10%,recent=10%");
  EXPECT_NE(records[2]["skip_reason"].get<std::string>().find("KV budget must be at least 1"),
            std::string::npos);
  EXPECT_FALSE(records[2].contains("tps_median"));
  for (const size_t i : {0, 1, 3}) {
    EXPECT_EQ(records[i]["skipped"], false) << records[i].dump();
    EXPECT_GT(records[i]["tps_median"].get<double>(), 0.0) << records[i].dump();
  }
}

TEST(BenchCli, EveryCellInvalidIsAnError) {
  const auto r = RunH2o(kBench + "-p 2,4 -n 0 --kv h2o:heavy=10%,recent=10% -r 1 -t 1");
  ExpectOneErrorLine(r, "nothing to run: all 2 tests are invalid, the first: --kv "
                        "'h2o:heavy=10%,recent=10%' for pp2 at depth 0 (2 tokens)");
  EXPECT_EQ(r.exit_code, 1);
}

// -o json is --json; -o jsonl is a line per test with the configuration in
// each; the timed runs are -r, the warm-up not among them.
TEST(BenchCli, OutputFormats) {
  const std::string args = "-p 8 -n 4 --depth 0 --kv full -r 2 -t 1 ";
  const auto json = RunH2o(kBench + args + "-o json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["warmup"], true);
  EXPECT_EQ(j["repetitions"], 2);
  ASSERT_EQ(j["records"].size(), 2u);
  for (const auto& rec : j["records"]) {
    EXPECT_EQ(rec["tps"].size(), 2u) << rec.dump();
    EXPECT_LE(rec["tps_min"].get<double>(), rec["tps_median"].get<double>());
    EXPECT_LE(rec["tps_median"].get<double>(), rec["tps_max"].get<double>());
    EXPECT_GT(rec["peak_rss_bytes"].get<double>(), 1.1 * 1024 * 1024);
    EXPECT_TRUE(rec["peak_rss_per_test"].is_boolean());
    EXPECT_EQ(rec["skipped"], false);
  }
  const auto alias = RunH2o(kBench + args + "--json --no-warmup");
  ASSERT_EQ(alias.exit_code, 0) << alias.err;
  const auto a = nlohmann::json::parse(alias.out);
  EXPECT_EQ(a["warmup"], false);
  EXPECT_EQ(a["records"].size(), 2u);

  const auto lines = RunH2o(kBench + args + "-o jsonl");
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  std::vector<nlohmann::json> records;
  size_t begin = 0;
  while (begin < lines.out.size()) {
    const size_t end = lines.out.find('\n', begin);
    ASSERT_NE(end, std::string::npos) << lines.out;
    records.push_back(nlohmann::json::parse(lines.out.substr(begin, end - begin)));
    begin = end + 1;
  }
  ASSERT_EQ(records.size(), 2u) << lines.out;
  EXPECT_EQ(records[0]["test"], "pp8");
  EXPECT_EQ(records[1]["test"], "tg4");
  for (const auto& rec : records) {
    EXPECT_EQ(rec["model"], testing::ModelPath());
    EXPECT_EQ(rec["threads"], 1);
    EXPECT_EQ(rec["tps"].size(), 2u);
    EXPECT_FALSE(rec.contains("records"));
  }

  testing::ExpectUsageError(RunH2o(kBench + args + "-o yaml"), "-o/--output");
  testing::ExpectUsageError(RunH2o(kBench + args + "--json -o md"), "--json");
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
  // stories260K's heads of 8 cannot hold 32-value blocks.
  ExpectOneErrorLine(RunH2o(kBench + "--kv-type q8_0"),
                     "K cache type q8_0 needs heads whose size is a multiple of 32");
  ExpectOneErrorLine(RunH2o("bench -m /nonexistent/model.gguf -p 4 -n 4"),
                     "/nonexistent/model.gguf");
  // Usage errors (exit 2), caught while parsing.
  ExpectUsageError(RunH2o(kBench + "-r 0"),
                   "h2o: error: -r/--repetitions: 0 is not allowed (more than 0)");
  ExpectUsageError(RunH2o(kBench + "--threads=-2"),
                   "h2o: error: -t/--threads: -2 is not allowed (0 or more)");
  ExpectUsageError(RunH2o(kBench + "--kv-type q4_K"),
                   "h2o: error: --kv-type: 'q4_K' is not allowed (one of: "
                   "f32,f16,bf16,q8_0,q4_0,q4_1,q5_0,q5_1)");
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

// 20 KiB holds a local:recent=8 request (8 slots + a 16-token chunk) but
// not a full one (64 tokens of 320 bytes of K/V rows alone): full is
// skipped with a note, local runs.
TEST(BenchThroughputCli, SkipsAPolicyThatDoesNotFit) {
  const auto r = RunH2o(kBench +
                        "--concurrency 2 -p 48 -n 16 --chunk 16 -t 1 --kv full,local:recent=8 "
                        "--kv-mem 20KiB -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.starts_with("h2o: note: skipping --kv 'full': a request's KV cache (")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["records"].size(), 2u);
  EXPECT_EQ(j["records"][0]["skipped"], true);
  EXPECT_EQ(j["records"][0]["kv"], "full");
  EXPECT_EQ(j["records"][1]["skipped"], false);
  const auto& local = j["records"][1];
  EXPECT_EQ(local["admitted"],
            std::min<int64_t>(2, 20 * 1024 / local["kv_bytes_per_sequence"].get<int64_t>()));
  EXPECT_GE(local["admitted"].get<int>(), 1);
  EXPECT_EQ(local["generated"], 2 * 16);
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
  ExpectUsageError(RunH2o(kBench + "--concurrency 4 -p 16 -n 8 --batch-tokens 0"),
                   "--batch-tokens: 0 is not allowed (more than 0)");
  ExpectOneErrorLine(RunH2o(kBench + "--fill -p 16 -n 8 --kv-mem-full -1"),
                     "--kv-mem-full must be 1 or more");
  ExpectOneErrorLine(RunH2o(kBench + "--fill -p 16 -n 8 --depth 32"),
                     "--concurrency runs from an empty cache");
}

// Conversation mode: the prompt cache off (first) and on per policy, a
// record each with a row per turn; on, the later turns resume.
TEST(BenchConversationCli, OffThenOnPerPolicy) {
  const auto r = RunH2o(kBench +
                        "--conversations 2 --turns 3 -p 8 -n 4 --chunk 8 -t 1 "
                        "--kv full,h2o:heavy=10%,recent=10% --cache-ram 1MiB -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "conversations");
  EXPECT_EQ(j["context"], 36);
  ASSERT_EQ(j["records"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const auto& rec = j["records"][i];
    EXPECT_EQ(rec["prompt_cache"], i % 2 == 1);
    ASSERT_EQ(rec["turns"].size(), 3u);
    EXPECT_EQ(rec["turns"][2]["prompt_tokens"], 8 + 12 + 12);
    EXPECT_EQ(rec["turns"][2]["resumed"], i % 2 == 1 ? 2 : 0);
  }
  EXPECT_EQ(j["records"][2]["kv_resolved"], "h2o:heavy=3,recent=3");
  const auto md = RunH2o(kBench + "--conversations 1 --turns 2 -p 8 -n 4 -t 1 --prompt-cache on");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| full | on |"), std::string::npos) << md.out;
  EXPECT_EQ(md.out.find("| off |"), std::string::npos) << md.out;
}

TEST(BenchConversationCli, BadInputIsOneLine) {
  ExpectOneErrorLine(RunH2o(kBench + "--conversations 2 -p 8,16 -n 4"),
                     "--conversations takes one -p and one -n");
  ExpectOneErrorLine(RunH2o(kBench + "--conversations 2 -p 8 -n 4 --depth 8"),
                     "--conversations runs from an empty cache");
  ExpectOneErrorLine(RunH2o(kBench + "--conversations 2 --concurrency 2 -p 8 -n 4"),
                     "--conversations and --concurrency are two modes");
  ExpectOneErrorLine(RunH2o(kBench + "--conversations 2 -p 8 -n 4 --cache-ram lots"),
                     "--cache-ram: 'lots'");
  ExpectOneErrorLine(RunH2o(kBench + "--conversations -1 -p 8 -n 4"),
                     "--conversations must be 1 or more");
  ExpectUsageError(RunH2o(kBench + "--conversations 2 -p 8 -n 4 --prompt-cache maybe"),
                   "--prompt-cache");
}

}  // namespace
}  // namespace h2o
