// A pinned seed gives pinned sampled tokens: `h2o generate -s 42` against
// an independent sampler (the standard's mt19937_64, 53 bits to [0, 1),
// inverse CDF over the tempered distribution, highest logit first) on a
// double-precision forward of the same model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "cli/run_binary.h"
#include "model/model.h"
#include "model/reference_forward.h"
#include "test_data.h"

namespace h2o {
namespace {

// Draws from softmax(logits / temperature), without top-k/top-p/min-p.
int32_t SampleInverseCdf(const std::vector<double>& logits, double temperature, std::mt19937_64& rng) {
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const double max = logits[order[0]];
  std::vector<double> weights;
  double sum = 0.0;
  for (int32_t id : order) sum += weights.emplace_back(std::exp((logits[id] - max) / temperature));
  double r = static_cast<double>(rng() >> 11) * 0x1.0p-53 * sum;
  for (size_t i = 0; i < order.size(); ++i) {
    if ((r -= weights[i]) < 0.0) return order[i];
  }
  return order.back();
}

TEST(SamplingCli, PinnedSeedGivesPinnedTokens) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 378};  // BOS "Once upon a time"
  const int n = 30;
  for (const uint64_t seed : {42u, 7u}) {
    SCOPED_TRACE(seed);
    testing::ReferenceForward ref(**model);
    std::mt19937_64 rng(seed);
    std::vector<int32_t> want = prompt;
    std::vector<double> logits = ref.Eval(prompt);
    for (int i = 0; i < n; ++i) {
      want.push_back(SampleInverseCdf(logits, 0.9, rng));
      ASSERT_NE(want.back(), 2) << "the reference reached EOS: pick another seed";
      logits = ref.Eval(std::span<const int32_t>(&want.back(), 1));
    }
    const auto r = testing::RunH2o("generate -m " + testing::ModelPath() + " --tokens '" + testing::JoinIds(prompt) +
                                   "' -n " + std::to_string(n) +
                                   " --temp 0.9 --top-k 0 --top-p 1 --min-p 0 --repeat-penalty 1 --kv-type f32"
                                   " --print-ids -s " + std::to_string(seed));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, testing::JoinIds(want) + "\n");
  }
}

}  // namespace
}  // namespace h2o
