#include "analysis/attention_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace h2o {
namespace {

Status Feed(Session& session, std::span<const int32_t> ids,
            const std::function<void(int64_t)>& on_tokens) {
  const size_t chunk = static_cast<size_t>(session.max_chunk());
  for (size_t begin = 0; begin < ids.size(); begin += chunk) {
    const size_t len = std::min(chunk, ids.size() - begin);
    H2O_RETURN_IF_ERROR(session.Eval(ids.subspan(begin, len)));
    if (on_tokens) on_tokens(static_cast<int64_t>(len));
  }
  return Status::Ok();
}

// The positions (layer, g) holds below `window_start`, sorted.
std::vector<int32_t> PositionsBelow(const KvCache& cache, int32_t layer, int32_t g,
                                    int32_t window_start) {
  const KvHeadView view = cache.View(layer, g);
  std::vector<int32_t> positions;
  for (int32_t s = 0; s < view.n_slots; ++s) {
    if (view.pos[s] >= 0 && view.pos[s] < window_start) positions.push_back(view.pos[s]);
  }
  std::sort(positions.begin(), positions.end());
  return positions;
}

double Mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

}  // namespace

LayerAnalysis SummarizeLayer(const AttentionCollector& collector, int32_t layer,
                             const std::vector<std::vector<int32_t>>& local_heavy, int32_t k,
                             double fit_ranks) {
  const int32_t n_head = collector.n_head();
  const int32_t n_head_kv = static_cast<int32_t>(local_heavy.size());
  H2O_CHECK(n_head_kv >= 1 && n_head % n_head_kv == 0);
  const int32_t n_group = n_head / n_head_kv;
  const size_t n = static_cast<size_t>(collector.n_positions());

  const auto fit_points = static_cast<int32_t>(std::ceil(fit_ranks * static_cast<double>(n)));
  LayerAnalysis out;
  out.rank_scores.assign(n, 0.0);
  for (int32_t h = 0; h < n_head; ++h) {
    out.head_sparsity.push_back(collector.sparsity(layer, h));
    const std::vector<double> sorted = SortedDescending(collector.accumulated(layer, h));
    out.head_fits.push_back(FitPowerLaw(sorted, fit_points));
    for (size_t r = 0; r < n; ++r) out.rank_scores[r] += sorted[r] / n_head;
  }
  out.sparsity = Mean(out.head_sparsity);
  out.fit = FitPowerLaw(out.rank_scores, fit_points);

  std::vector<double> group_scores(n);
  for (int32_t g = 0; g < n_head_kv; ++g) {
    std::fill(group_scores.begin(), group_scores.end(), 0.0);
    for (int32_t j = 0; j < n_group; ++j) {
      const std::span<const double> acc = collector.accumulated(layer, g * n_group + j);
      for (size_t p = 0; p < n; ++p) group_scores[p] += acc[p];
    }
    const std::vector<int32_t> global = TopKPositions(group_scores, k);
    out.kv_head_overlap.push_back(OverlapFraction(local_heavy[g], global));
  }
  out.overlap = Mean(out.kv_head_overlap);
  return out;
}

Result<AttentionAnalysis> AnalyzeAttention(const Model& model, std::span<const int32_t> ids,
                                           const AttentionAnalysisOptions& options) {
  const HParams& hp = model.hparams();
  const int32_t n_tokens = static_cast<int32_t>(ids.size());
  if (n_tokens < 2) {
    return Status::Error(fmt::format("need at least 2 tokens to analyze, got {}", n_tokens));
  }
  if (options.local.heavy < 1) {
    return Status::Error(
        fmt::format("the heavy-hitter comparison needs a cache with heavy >= 1 (h2o), not '{}'",
                    options.local.Describe()));
  }

  SessionOptions full_options = options.session;
  full_options.kv = KvPlan{};
  full_options.n_ctx = n_tokens;
  full_options.kv_pos_shift = false;
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Session> full, Session::Create(model, full_options));
  AttentionCollector collector(hp.n_layer, hp.n_head, n_tokens, options.sparsity_ratio);
  full->set_attention_observer(&collector);
  H2O_RETURN_IF_ERROR(Feed(*full, ids, options.on_tokens));
  full.reset();

  SessionOptions local_options = full_options;
  local_options.kv = options.local;
  local_options.max_chunk = 1;
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Session> local, Session::Create(model, local_options));
  H2O_RETURN_IF_ERROR(Feed(*local, ids, options.on_tokens));

  AttentionAnalysis analysis;
  analysis.n_tokens = n_tokens;
  analysis.n_layer = hp.n_layer;
  analysis.n_head = hp.n_head;
  analysis.n_head_kv = hp.n_head_kv;
  analysis.sparsity_ratio = options.sparsity_ratio;
  analysis.fit_ranks = options.fit_ranks;
  analysis.heavy = options.local.heavy;
  analysis.recent = options.local.recent;
  // The newest position is never evicted, so the recent window is the
  // last `recent` positions of the sequence.
  const int32_t window_start = n_tokens - std::min(options.local.recent, n_tokens);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    std::vector<std::vector<int32_t>> local_heavy;
    for (int32_t g = 0; g < hp.n_head_kv; ++g) {
      local_heavy.push_back(PositionsBelow(local->cache(), l, g, window_start));
    }
    analysis.layers.push_back(
        SummarizeLayer(collector, l, local_heavy, options.local.heavy, options.fit_ranks));
    analysis.layers.back().window = hp.window(l);
  }
  return analysis;
}

}  // namespace h2o
