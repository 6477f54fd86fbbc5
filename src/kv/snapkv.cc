// SnapKV's victim choice (see snapkv.h for the rule and its paper).
#include "kv/snapkv.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/status.h"
#include "kv/policies.h"
#include "kv/policy_registry.h"

namespace h2o {

SnapKvPolicy::SnapKvPolicy(int32_t budget, int32_t window, int32_t kernel)
    : budget_(budget), window_(window), kernel_(kernel) {
  H2O_CHECK(window >= 1 && window < budget);
  H2O_CHECK(kernel >= 1 && kernel % 2 == 1);
}

void SnapKvPolicy::RankCandidates(const HeadMetadata& meta, int64_t window_start) {
  // Before the first eviction the positions are exactly 0..newest_pos, so
  // the candidates are the positions 0..window_start-1.
  const auto n = static_cast<int32_t>(window_start);
  slot_of_pos_.assign(n, -1);
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    if (meta.pos[s] >= 0 && meta.pos[s] < n) slot_of_pos_[meta.pos[s]] = s;
  }
  // pooled[p] = max of the scores at positions [p - half, p + half] within
  // [0, n): a sliding maximum over a queue of positions whose scores fall
  // from front to back.
  const int64_t half = kernel_ / 2;
  pooled_.resize(n);
  queue_.clear();
  size_t front = 0;
  int64_t right = -1;  // the last position pushed
  for (int32_t p = 0; p < n; ++p) {
    const int64_t last = std::min<int64_t>(n - 1, p + half);
    while (right < last) {
      ++right;
      const double x = meta.score[slot_of_pos_[right]];
      while (queue_.size() > front && meta.score[slot_of_pos_[queue_.back()]] <= x) {
        queue_.pop_back();
      }
      queue_.push_back(static_cast<int32_t>(right));
    }
    while (queue_[front] < p - half) ++front;
    pooled_[p] = meta.score[slot_of_pos_[queue_[front]]];
  }
  order_pos_.resize(n);
  for (int32_t p = 0; p < n; ++p) order_pos_[p] = p;
  std::sort(order_pos_.begin(), order_pos_.end(), [&](int32_t a, int32_t b) {
    return pooled_[a] < pooled_[b] || (pooled_[a] == pooled_[b] && a < b);
  });
  order_.resize(n);
  for (int32_t i = 0; i < n; ++i) order_[i] = slot_of_pos_[order_pos_[i]];
}

int32_t SnapKvPolicy::ChooseVictim(const HeadMetadata& meta) {
  // The next victim of a selection in progress on this head.
  if (meta.pos == pending_pos_ && meta.count == pending_count_ && next_ < order_.size() &&
      meta.pos[order_[next_]] == order_pos_[next_]) {
    --pending_count_;
    return order_[next_++];
  }
  pending_pos_ = nullptr;
  const int64_t window_start = RecentWindowStart(meta, window_);
  if (static_cast<int64_t>(meta.newest_pos) + 1 != meta.count) {
    // Selected before: the newest token outside the window goes.
    int32_t victim = -1;
    for (int32_t s = 0; s < meta.n_slots; ++s) {
      const int32_t p = meta.pos[s];
      if (p >= 0 && p < window_start && (victim < 0 || p > meta.pos[victim])) victim = s;
    }
    H2O_CHECK(victim >= 0);
    return victim;
  }
  RankCandidates(meta, window_start);
  H2O_CHECK(!order_.empty() && order_[0] >= 0);
  pending_pos_ = meta.pos;
  pending_count_ = meta.count - 1;
  next_ = 1;
  return order_[0];
}

namespace {

constexpr KvKey kSnapKvKeys[] = {{"budget", true, 0},
                                 {"window", false, 32},
                                 {"kernel", false, 7, KvValueKind::kInteger},
                                 {"pyramid", false, 0, KvValueKind::kInteger}};

Status CheckSnapKv(const KvPlan& plan, std::string_view spec_text, std::string_view prompt_note) {
  if (plan.window >= 1 && plan.window < plan.budget) return Status::Ok();
  // It keeps budget - window selected tokens plus the window.
  return Status::Error(fmt::format("snapkv needs 1 <= window < budget ({} gives window={}, budget={}{})",
                                   spec_text, plan.window, plan.budget, prompt_note));
}

std::string DescribeSnapKv(const KvPlan& p) {
  return fmt::format("snapkv:budget={},window={},kernel={}{}", p.k, p.window, p.kernel,
                     p.pyramid > 0 ? fmt::format(",pyramid={}", p.pyramid) : std::string());
}

}  // namespace

extern const PolicyDescriptor kSnapKvPolicyDescriptor{
    .name = "snapkv",
    .keys = kSnapKvKeys,
    .split = {BudgetSplit::Kind::kWhole, "budget"},  // its default observation window
    .pyramid_fixed = &KvPlan::window,
    .check = CheckSnapKv,
    .describe = DescribeSnapKv,
    .make = [](const KvPlan& p, int32_t) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<SnapKvPolicy>(p.k, p.window, p.kernel);
    },
};

}  // namespace h2o
