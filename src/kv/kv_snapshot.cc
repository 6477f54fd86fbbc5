#include "kv/kv_snapshot.h"

#include <algorithm>
#include <utility>

namespace h2o {

size_t KvSnapshot::MemoryBytes() const {
  size_t bytes = sizeof(*this) + policy.size() + layer_window.size() * sizeof(int32_t);
  for (const Head& h : heads) {
    bytes += sizeof(Head) + h.positions.size() * sizeof(int32_t) + h.scores.size() * sizeof(double);
  }
  return bytes;
}

KvSnapshot TakeKvSnapshot(const KvCache& cache) {
  const KvCacheConfig& c = cache.config();
  KvSnapshot snap;
  snap.policy = cache.policy().name();
  snap.budget = c.budget;
  snap.capacity = c.capacity;
  snap.scores_tracked = cache.policy().needs_scores();
  snap.n_layer = c.n_layer;
  snap.n_head_kv = c.n_head_kv;
  snap.layer_window = c.layer_window;
  snap.heads.resize(static_cast<size_t>(c.n_layer) * c.n_head_kv);
  std::vector<std::pair<int32_t, double>> kept;
  for (int32_t l = 0; l < c.n_layer; ++l) {
    for (int32_t g = 0; g < c.n_head_kv; ++g) {
      const KvHeadView view = cache.View(l, g);
      const double* scores = cache.scores(l, g);
      kept.clear();
      for (int32_t s = 0; s < view.n_slots; ++s) {
        if (view.pos[s] >= 0) kept.emplace_back(view.pos[s], scores ? scores[s] : 0.0);
      }
      std::sort(kept.begin(), kept.end());
      KvSnapshot::Head& head = snap.heads[l * c.n_head_kv + g];
      head.positions.reserve(kept.size());
      head.scores.reserve(kept.size());
      for (const auto& [pos, score] : kept) {
        head.positions.push_back(pos);
        head.scores.push_back(score);
      }
    }
  }
  return snap;
}

}  // namespace h2o
