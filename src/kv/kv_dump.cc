#include "kv/kv_dump.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace h2o {
namespace {

nlohmann::json HeadJson(const KvCache& cache, int32_t l, int32_t g) {
  const KvHeadView view = cache.View(l, g);
  const double* scores = cache.scores(l, g);
  std::vector<std::pair<int32_t, double>> kept;
  for (int32_t s = 0; s < view.n_slots; ++s) {
    if (view.pos[s] >= 0) kept.emplace_back(view.pos[s], scores ? scores[s] : 0.0);
  }
  std::sort(kept.begin(), kept.end());
  nlohmann::json positions = nlohmann::json::array(), values = nlohmann::json::array();
  for (const auto& [pos, score] : kept) {
    positions.push_back(pos);
    values.push_back(score);
  }
  nlohmann::json head = {{"head", g}, {"positions", positions}};
  if (!cache.config().windowed(l)) head["scores"] = values;
  return head;
}

}  // namespace

std::string KvDumpJson(const KvCache& cache) {
  const KvCacheConfig& c = cache.config();
  nlohmann::json layers = nlohmann::json::array();
  for (int32_t l = 0; l < c.n_layer; ++l) {
    nlohmann::json heads = nlohmann::json::array();
    for (int32_t g = 0; g < c.n_head_kv; ++g) heads.push_back(HeadJson(cache, l, g));
    nlohmann::json layer = {{"layer", l}, {"heads", heads}};
    if (c.windowed(l)) layer["window"] = c.layer_window[l];
    layers.push_back(std::move(layer));
  }
  const nlohmann::json out = {{"policy", cache.policy().name()},
                              {"budget", c.budget},
                              {"capacity", c.capacity},
                              {"scores_tracked", cache.policy().needs_scores()},
                              {"layers", layers}};
  return out.dump() + "\n";
}

}  // namespace h2o
