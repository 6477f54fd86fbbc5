// The measurement behind `h2o bench`: the --kv list splitter, count lists,
// and one real run per kind of test on stories260K with the KV sizes worked
// out by hand from its config (5 layers, 4 KV heads, head_dim 8, f16).
#include "perf/bench.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kv/kv_cache.h"
#include "test_data.h"

namespace h2o {
namespace {

TEST(ParseCountList, ValuesAndErrors) {
  auto ok = ParseCountList("512, 2048,0", "-p");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, (std::vector<int32_t>{512, 2048, 0}));
  for (const char* bad : {"", "x", "1,,2", "-1", "1.5", "3000000000", "12a", "1,"}) {
    auto r = ParseCountList(bad, "--depth");
    EXPECT_FALSE(r.ok()) << "'" << bad << "'";
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().rfind("--depth: ", 0), 0u) << r.status().message();
    }
  }
}

TEST(BenchTest, Names) {
  EXPECT_EQ((BenchTest{BenchKind::kPrompt, 512, 0}).Name(), "pp512");
  EXPECT_EQ((BenchTest{BenchKind::kGenerate, 128, 2048}).Name(), "tg128");
}

TEST(RandomTokens, SeededAndInRange) {
  const auto a = RandomTokens(512, 1000, 7);
  EXPECT_EQ(a, RandomTokens(512, 1000, 7));
  EXPECT_NE(a, RandomTokens(512, 1000, 8));
  for (int32_t id : a) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 512);
  }
}

TEST(PeakRss, SeesATouchedBufferAndResets) {
  constexpr size_t kBytes = size_t{64} << 20;
  {
    std::vector<char> buffer(kBytes);
    // Volatile writes to every page: clang may otherwise elide an unused
    // allocation altogether.
    volatile char* pages = buffer.data();
    for (size_t i = 0; i < kBytes; i += 4096) pages[i] = 1;
    EXPECT_GE(PeakRssBytes(), kBytes);
  }
  if (ResetPeakRss()) {  // the buffer is gone: the peak drops back below it (plus the rest)
    EXPECT_LT(PeakRssBytes(), kBytes + (size_t{48} << 20));
  }
}

class BenchOnStories : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = Model::Load(testing::ModelPath());
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::move(m).value().release();
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static KvSpec Spec(const std::string& text) {
    auto s = ParseKvSpec(text);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return *s;
  }
  BenchRecord Run(const std::string& kv, BenchTest test) {
    BenchOptions o;
    o.n_threads = 1;
    o.chunk = 8;
    o.repetitions = 2;
    auto r = RunBenchTest(*model_, Spec(kv), test, o, /*membw_gbps=*/10.0);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : BenchRecord{};
  }
  static Model* model_;
};
Model* BenchOnStories::model_ = nullptr;

// Per slot, f16: K and V rows of 8 halves (2 * 16 B) + position (4) = 36 B;
// h2o adds its score (8). 20 (layer, KV head) pairs. An evicting cache
// keeps K/V rows for its budget per pair plus one chunk per KV head (the
// spill all layers share), metadata for budget + chunk, and a freed-slot
// index (4 B) per spill slot of each KV head.
constexpr size_t kHeads = 5 * 4;
constexpr size_t kH2oBytes = kHeads * 16 * 32 + 4 * 8 * 32 + kHeads * (16 + 8) * 12 + 4 * 8 * 4;

TEST_F(BenchOnStories, PromptAtDepthFullVsH2o) {
  const BenchTest pp{BenchKind::kPrompt, 16, 32};
  const BenchRecord full = Run("full", pp);
  const BenchRecord h2o = Run("h2o:heavy=8,recent=8", pp);
  for (const BenchRecord* r : {&full, &h2o}) {
    ASSERT_EQ(r->tps.size(), 2u);
    EXPECT_GT(r->tps_min, 0.0);
    EXPECT_GE(r->tps_median, r->tps_min);
    // 48 slots of f16 K and V (32 B) and their position (4 B): the full
    // cache counted as the session's own (kv/kv_report.h).
    EXPECT_EQ(r->kv_bytes_full, kHeads * 48 * (2 * 16 + 4));
    EXPECT_GT(r->peak_rss_bytes, 0u);
    EXPECT_FALSE(r->bytes_per_token.has_value());  // roofline is for decode only
    EXPECT_FALSE(r->roofline_tps.has_value());
  }
  EXPECT_EQ(full.kv_bytes, kHeads * 48 * 36);       // capacity n_ctx = 32 + 16
  EXPECT_EQ(h2o.kv_bytes, kH2oBytes);  // budget 16, chunk 8
  EXPECT_EQ(h2o.kv_resolved, "h2o:heavy=8,recent=8");
}

TEST_F(BenchOnStories, GenerateAtDepthFullVsH2o) {
  const BenchTest tg{BenchKind::kGenerate, 8, 32};
  const BenchRecord full = Run("full", tg);
  const BenchRecord h2o = Run("h2o:heavy=8,recent=8", tg);
  EXPECT_EQ(full.kv_bytes, kHeads * 40 * 36);
  EXPECT_EQ(h2o.kv_bytes, kH2oBytes);
  // Token i attends to 33 + i tokens in the full cache, budget + 1 = 17 in h2o.
  ASSERT_TRUE(full.kv_tokens_read && h2o.kv_tokens_read);
  EXPECT_DOUBLE_EQ(*full.kv_tokens_read, 36.5);
  EXPECT_DOUBLE_EQ(*h2o.kv_tokens_read, 17.0);
  const size_t weights = DescribeModel(*model_).weight_bytes_per_token;
  EXPECT_DOUBLE_EQ(*full.bytes_per_token, weights + 2.0 * kHeads * 16 * 36.5);
  EXPECT_DOUBLE_EQ(*h2o.bytes_per_token, weights + 2.0 * kHeads * 16 * 17.0);
  for (const BenchRecord* r : {&full, &h2o}) {
    EXPECT_GT(r->tps_min, 0.0);
    EXPECT_NEAR(*r->achieved_gbps, *r->bytes_per_token * r->tps_median / 1e9, 1e-12);
    EXPECT_NEAR(*r->roofline_tps, 10e9 / *r->bytes_per_token, 1e-6);
  }
}

TEST_F(BenchOnStories, PercentBudgetsResolveAgainstDepthPlusTestLength) {
  // 10% of 32 + 8 = 40 tokens.
  const BenchRecord r = Run("h2o:heavy=10%,recent=10%", {BenchKind::kGenerate, 8, 32});
  EXPECT_EQ(r.kv, "h2o:heavy=10%,recent=10%");
  EXPECT_EQ(r.kv_resolved, "h2o:heavy=4,recent=4");
  auto too_small = RunBenchTest(*model_, Spec("h2o:heavy=1%,recent=1%"),
                                {BenchKind::kPrompt, 16, 0}, BenchOptions{}, 0.0);
  ASSERT_FALSE(too_small.ok());
  EXPECT_NE(too_small.status().message().find("h2o:heavy=1%,recent=1%"), std::string::npos)
      << too_small.status().message();
}

TEST_F(BenchOnStories, DepthZeroAndNoBandwidth) {
  BenchOptions o;
  o.repetitions = 1;
  auto r = RunBenchTest(*model_, Spec("full"), {BenchKind::kGenerate, 4, 0}, o, 0.0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(*r->kv_tokens_read, 2.5);
  EXPECT_FALSE(r->roofline_tps.has_value());
}

TEST_F(BenchOnStories, WeightBytesPerToken) {
  // Untied output: every tensor once, except that token_embd contributes one row.
  const ModelFootprint f = DescribeModel(*model_);
  const gguf::TensorInfo* embd = model_->file().FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(f.weight_bytes_per_token, f.tensor_bytes - embd->nbytes + embd->nbytes / 512);
  EXPECT_EQ(f.arch, "llama");
  EXPECT_GT(f.n_params, 200000);
  EXPECT_FALSE(f.weight_type.empty());
}

}  // namespace
}  // namespace h2o
