// KvCache's state out and back in (kv/kv_cache_state.h).
#include <algorithm>
#include <cstring>

#include "core/status.h"
#include "kv/kv_cache.h"
#include "kv/policy_registry.h"

namespace h2o {

size_t KvCacheState::Bytes() const {
  return k.size() + v.size() + (pos.size() + used.size() + newest_pos.size()) * sizeof(int32_t) +
         scores.size() * sizeof(double) + step_attention.size() * sizeof(float);
}

void KvCache::SaveState(KvCacheState& state) const {
  H2O_CHECK(state.policy != nullptr && state.policy->name() == policy_->name());
  for (const int32_t spilled : spill_layer_) H2O_CHECK(spilled < 0);
  state.layer_budget.resize(config_.n_layer);
  state.layer_window.assign(config_.n_layer, 0);
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    state.layer_budget[l] = config_.layer_budget(l);
    if (config_.windowed(l)) state.layer_window[l] = config_.layer_window[l];
  }
  state.n_head_kv = config_.n_head_kv;
  state.head_dim = config_.head_dim;
  state.types = config_.types;
  state.used = high_water_;
  state.newest_pos = newest_pos_;
  state.k.clear();
  state.v.clear();
  state.pos.clear();
  state.scores.clear();
  state.step_attention.clear();
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    for (int32_t head = 0; head < config_.n_head_kv; ++head) {
      const KvHeadView rows = View(l, head);
      const auto used = static_cast<size_t>(rows.n_slots);
      // Nothing is spilled, so every held slot is a home slot, in order.
      const auto* k = static_cast<const uint8_t*>(rows.k);
      const auto* v = static_cast<const uint8_t*>(rows.v);
      state.k.insert(state.k.end(), k, k + used * k_row_bytes_);
      state.v.insert(state.v.end(), v, v + used * v_row_bytes_);
      state.pos.insert(state.pos.end(), rows.pos, rows.pos + used);
      if (const double* score = scores(l, head)) {
        state.scores.insert(state.scores.end(), score, score + used);
      }
      if (!step_attn_.empty() && !config_.windowed(l)) {
        const float* step = &step_attn_[ScoredIndex(l, head, 0)];
        state.step_attention.insert(state.step_attention.end(), step, step + used);
      }
    }
  }
  state.policy->CopyStateFrom(*policy_);
}

bool KvCache::CanLoadState(const KvCacheState& state) const {
  if (state.policy == nullptr || state.policy->name() != policy_->name() ||
      state.n_head_kv != config_.n_head_kv || state.head_dim != config_.head_dim ||
      !(state.types == config_.types) ||
      static_cast<int32_t>(state.layer_budget.size()) != config_.n_layer ||
      state.k.size() != state.pos.size() * k_row_bytes_ ||
      state.v.size() != state.pos.size() * v_row_bytes_ ||
      state.layer_window.size() != state.layer_budget.size() ||
      state.used.size() != count_.size() || state.newest_pos.size() != count_.size()) {
    return false;
  }
  // The rows, scores and step attention add up to what the heads hold (a
  // state read from a file is checked here before anything is copied).
  size_t held = 0, held_scored = 0;
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    for (int32_t head = 0; head < config_.n_head_kv; ++head) {
      const int32_t used = state.used[HeadIndex(l, head)];
      if (used < 0) return false;
      held += static_cast<size_t>(used);
      if (!config_.windowed(l)) held_scored += static_cast<size_t>(used);
    }
  }
  if (held != state.pos.size() ||
      (!state.scores.empty() && state.scores.size() != held_scored) ||
      (!state.step_attention.empty() && state.step_attention.size() != held_scored)) {
    return false;
  }
  const bool evicts = PolicyEvicts(policy_->name());
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    const int32_t budget = config_.layer_budget(l);
    const int32_t window = config_.windowed(l) ? config_.layer_window[l] : 0;
    // A layer that evicted nothing holds every position so far, as it would
    // under any budget or window that holds them: it loads into those. One
    // that evicted chose under its own budget and window, so only an equal
    // budget and window go on from it as the same session would.
    bool all_held = true;
    for (int32_t head = 0; head < config_.n_head_kv; ++head) {
      const size_t h = HeadIndex(l, head);
      if (state.used[h] > budget) return false;
      all_held = all_held && state.used[h] == state.newest_pos[h] + 1;
    }
    if (all_held) continue;
    if (window != state.layer_window[l]) return false;
    if (window == 0 && evicts && state.layer_budget[l] != budget) return false;
  }
  return true;
}

void KvCache::LoadState(const KvCacheState& state) {
  H2O_CHECK(CanLoadState(state));
  Clear();
  size_t row = 0, scored = 0, stepped = 0;
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    for (int32_t head = 0; head < config_.n_head_kv; ++head) {
      const size_t h = HeadIndex(l, head);
      const auto used = static_cast<size_t>(state.used[h]);
      const size_t home = layout_[l].row + static_cast<size_t>(head) * config_.layer_budget(l);
      std::memcpy(&k_[home * k_row_bytes_], &state.k[row * k_row_bytes_], used * k_row_bytes_);
      std::memcpy(&v_[home * v_row_bytes_], &state.v[row * v_row_bytes_], used * v_row_bytes_);
      std::copy_n(&state.pos[row], used, &pos_[SlotIndex(l, head, 0)]);
      row += used;
      if (double* score = scores(l, head); score != nullptr && !state.scores.empty()) {
        std::copy_n(&state.scores[scored], used, score);
        scored += used;
      }
      if (float* step = step_attention(l, head); step != nullptr && !state.step_attention.empty()) {
        std::copy_n(&state.step_attention[stepped], used, step);
        stepped += used;
      }
      count_[h] = high_water_[h] = state.used[h];
      newest_pos_[h] = state.newest_pos[h];
    }
  }
  policy_->CopyStateFrom(*state.policy);
}

}  // namespace h2o
