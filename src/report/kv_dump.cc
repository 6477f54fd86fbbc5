#include "report/kv_dump.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace h2o {
namespace {

nlohmann::json LayerJson(const KvSnapshot& snapshot, int32_t l) {
  nlohmann::json heads = nlohmann::json::array();
  for (int32_t g = 0; g < snapshot.n_head_kv; ++g) {
    const KvSnapshot::Head& h = snapshot.head(l, g);
    nlohmann::json head = {{"head", g}, {"positions", h.positions}};
    if (!snapshot.windowed(l)) head["scores"] = h.scores;
    heads.push_back(std::move(head));
  }
  nlohmann::json layer = {{"layer", l}, {"heads", std::move(heads)}};
  if (snapshot.windowed(l)) layer["window"] = snapshot.layer_window[l];
  return layer;
}

}  // namespace

nlohmann::json KvDumpObject(const KvSnapshot& snapshot, std::optional<int32_t> only_layer) {
  nlohmann::json layers = nlohmann::json::array();
  if (only_layer) {
    layers.push_back(LayerJson(snapshot, *only_layer));
  } else {
    for (int32_t l = 0; l < snapshot.n_layer; ++l) layers.push_back(LayerJson(snapshot, l));
  }
  return {{"policy", snapshot.policy},
          {"budget", snapshot.budget},
          {"capacity", snapshot.capacity},
          {"scores_tracked", snapshot.scores_tracked},
          {"layers", std::move(layers)}};
}

std::string KvDumpJson(const KvCache& cache) {
  return KvDumpObject(TakeKvSnapshot(cache)).dump() + "\n";
}

}  // namespace h2o
