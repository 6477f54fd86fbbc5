// The --kv-dump JSON of a cache with a sliding-window layer, against a
// hand-derived run.
#include "report/kv_dump.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kv/policies.h"

namespace h2o {
namespace {

TEST(KvDump, WindowedLayersListTheirWindowAndNoScores) {
  KvCacheConfig c;
  c.n_layer = 2;
  c.n_head_kv = 1;
  c.head_dim = 2;
  c.budget = 3;
  c.capacity = 4;
  c.layer_window = {0, 3};
  c.window_chunk = 1;
  KvCache cache(c, std::make_unique<H2oPolicy>(1, 2));
  const float row[2] = {1.0f, 2.0f};
  // Positions 0..5 one at a time; only position 0 ever gets attention (1
  // per step), so h2o keeps it as its heavy hitter beside the recent two.
  for (int32_t t = 0; t < 6; ++t) {
    for (int32_t l = 0; l < 2; ++l) {
      cache.Append(l, 0, t, row, row);
      if (double* score = cache.scores(l, 0)) {
        const KvHeadView view = cache.View(l, 0);
        for (int32_t s = 0; s < view.n_slots; ++s) score[s] += view.pos[s] == 0 ? 1.0 : 0.0;
      }
      cache.EvictOverBudget(l);
    }
  }
  const nlohmann::json dump = nlohmann::json::parse(KvDumpJson(cache));
  EXPECT_EQ(dump["policy"], "h2o");
  EXPECT_EQ(dump["budget"], 3);
  EXPECT_EQ(dump["scores_tracked"], true);
  ASSERT_EQ(dump["layers"].size(), 2u);
  const auto& global = dump["layers"][0];
  EXPECT_FALSE(global.contains("window"));
  EXPECT_EQ(global["heads"][0]["positions"], nlohmann::json({0, 4, 5}));
  EXPECT_EQ(global["heads"][0]["scores"], nlohmann::json({6.0, 0.0, 0.0}));
  const auto& windowed = dump["layers"][1];
  EXPECT_EQ(windowed["window"], 3);
  EXPECT_EQ(windowed["heads"][0]["positions"], nlohmann::json({3, 4, 5}));
  EXPECT_FALSE(windowed["heads"][0].contains("scores"));
}

}  // namespace
}  // namespace h2o
