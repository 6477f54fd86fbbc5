// Victim choice for the evicting policies. Every scan visits the slots
// [0, n_slots) once, skips empty slots (pos < 0), and keeps the best slot so
// far under a strict "better" test whose last criterion is the lower
// position, so ties resolve to the lowest position whatever the slot order.
#include "kv/policies.h"

#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "core/status.h"
#include "kv/policy_registry.h"

namespace h2o {
namespace {

// Number of present tokens with pos >= threshold.
int32_t CountAtOrAbove(const HeadMetadata& meta, int64_t threshold) {
  int32_t n = 0;
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    if (meta.pos[s] >= 0 && meta.pos[s] >= threshold) ++n;
  }
  return n;
}

struct BelowScan {
  int32_t best = -1;        // slot minimising the key below the limit; -1: none
  int32_t at_or_above = 0;  // present tokens with pos >= limit
};

// Slot of the present token with pos < limit minimising key(s), ties to the
// lowest position, and the count of the others, in one pass. The best key
// and position stay in registers (key may divide: h2o:score=mean).
template <typename Key>
BelowScan ScanBelow(const HeadMetadata& meta, int64_t limit, Key key) {
  BelowScan scan;
  double best_key = 0.0;
  int32_t best_pos = 0;
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    const int32_t p = meta.pos[s];
    if (p < 0) continue;
    if (p >= limit) {
      ++scan.at_or_above;
      continue;
    }
    const double k = key(s);
    if (scan.best < 0 || k < best_key || (k == best_key && p < best_pos)) {
      scan.best = s;
      best_key = k;
      best_pos = p;
    }
  }
  return scan;
}

template <typename Key>
int32_t ArgMinBelow(const HeadMetadata& meta, int64_t limit, Key key) {
  return ScanBelow(meta, limit, key).best;
}

// ArgMinBelow(meta, RecentWindowStart(meta, recent), key), in one pass when
// the recent window is the contiguous run of positions up to newest_pos
// (RecentWindowStart's fast path): a decode step's eviction.
template <typename Key>
int32_t ArgMinOutsideRecent(const HeadMetadata& meta, int32_t recent, Key key) {
  H2O_CHECK(recent >= 0 && meta.count > recent);
  const int64_t guess = recent == 0 ? std::numeric_limits<int64_t>::max()
                                    : static_cast<int64_t>(meta.newest_pos) - recent + 1;
  const BelowScan scan = ScanBelow(meta, guess, key);
  if (scan.at_or_above == recent) return scan.best;
  return ArgMinBelow(meta, RecentWindowStart(meta, recent), key);
}

int32_t LowestPositionAtLeast(const HeadMetadata& meta, int32_t min_pos) {
  int32_t best = -1;
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    const int32_t p = meta.pos[s];
    if (p >= 0 && p >= min_pos && (best < 0 || p < meta.pos[best])) best = s;
  }
  return best;
}

}  // namespace

int64_t RecentWindowStart(const HeadMetadata& meta, int32_t recent) {
  H2O_CHECK(recent >= 0 && meta.count > recent);
  if (recent == 0) return std::numeric_limits<int64_t>::max();
  // Fast path: tokens arrive in position order and the window is never
  // evicted, so it is the contiguous run newest_pos-recent+1..newest_pos.
  const int64_t guess = static_cast<int64_t>(meta.newest_pos) - recent + 1;
  if (CountAtOrAbove(meta, guess) == recent) return guess;
  // General case: the largest t with at least `recent` positions >= t is
  // the recent-th highest position (positions are distinct).
  int64_t lo = 0;  // CountAtOrAbove(lo) == count > recent
  int64_t hi = std::numeric_limits<int32_t>::max();
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (CountAtOrAbove(meta, mid) >= recent) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

LocalPolicy::LocalPolicy(int32_t recent) : recent_(recent) { H2O_CHECK(recent >= 1); }

int32_t LocalPolicy::ChooseVictim(const HeadMetadata& meta) {
  const int32_t victim = LowestPositionAtLeast(meta, 0);
  H2O_CHECK(victim >= 0);
  return victim;
}

SinkPolicy::SinkPolicy(int32_t sinks, int32_t recent) : sinks_(sinks), recent_(recent) {
  H2O_CHECK(sinks >= 0 && recent >= 1);
  H2O_CHECK(static_cast<int64_t>(sinks) + recent <= std::numeric_limits<int32_t>::max());
}

int32_t SinkPolicy::ChooseVictim(const HeadMetadata& meta) {
  // Over budget means more than `recent` tokens at positions >= sinks, so
  // the lowest of them lies outside the recent window.
  const int32_t victim = LowestPositionAtLeast(meta, sinks_);
  H2O_CHECK(victim >= 0);
  return victim;
}

H2oPolicy::H2oPolicy(int32_t heavy, int32_t recent, H2oScore score)
    : heavy_(heavy), recent_(recent), score_(score) {
  H2O_CHECK(heavy >= 0 && recent >= 0);
  H2O_CHECK(score.kind != H2oScore::Kind::kEma || (score.decay > 0 && score.decay < 1));
  H2O_CHECK(static_cast<int64_t>(heavy) + recent >= 1);
  H2O_CHECK(static_cast<int64_t>(heavy) + recent <= std::numeric_limits<int32_t>::max());
}

int32_t H2oPolicy::ChooseVictim(const HeadMetadata& meta) {
  int32_t victim;
  if (score_.kind == H2oScore::Kind::kMean) {
    victim = ArgMinOutsideRecent(meta, recent_, [&](int32_t s) {
      return meta.score[s] / (static_cast<double>(meta.newest_pos) - meta.pos[s] + 1);
    });
  } else {  // the sum, or the moving average the cache keeps in meta.score
    victim = ArgMinOutsideRecent(meta, recent_, [&](int32_t s) { return meta.score[s]; });
  }
  H2O_CHECK(victim >= 0);
  return victim;
}

H2onlyPolicy::H2onlyPolicy(int32_t heavy) : heavy_(heavy) { H2O_CHECK(heavy >= 1); }

int32_t H2onlyPolicy::ChooseVictim(const HeadMetadata& meta) {
  const int32_t victim = ArgMinBelow(meta, std::numeric_limits<int64_t>::max(),
                                     [&](int32_t s) { return meta.score[s]; });
  H2O_CHECK(victim >= 0);
  return victim;
}

TovaPolicy::TovaPolicy(int32_t k) : k_(k) { H2O_CHECK(k >= 1); }

int32_t TovaPolicy::ChooseVictim(const HeadMetadata& meta) {
  const int32_t victim = ArgMinBelow(meta, std::numeric_limits<int64_t>::max(),
                                     [&](int32_t s) { return meta.step_attention[s]; });
  H2O_CHECK(victim >= 0);
  return victim;
}

RandomPolicy::RandomPolicy(int32_t k, int32_t recent, uint64_t seed)
    : k_(k), recent_(recent), rng_(seed) {
  H2O_CHECK(k >= 0 && recent >= 0);
  H2O_CHECK(static_cast<int64_t>(k) + recent >= 1);
  H2O_CHECK(static_cast<int64_t>(k) + recent <= std::numeric_limits<int32_t>::max());
}

void RandomPolicy::CopyStateFrom(const EvictionPolicy& other) {
  const auto* random = dynamic_cast<const RandomPolicy*>(&other);
  H2O_CHECK(random != nullptr);
  rng_ = random->rng_;
}

std::string RandomPolicy::SaveStateBytes() const {
  std::ostringstream out;
  out << rng_;
  return out.str();
}

bool RandomPolicy::LoadStateBytes(std::string_view bytes) {
  std::istringstream in{std::string(bytes)};
  std::mt19937_64 rng;
  in >> rng;
  if (in.fail()) return false;
  in >> std::ws;
  if (!in.eof()) return false;
  rng_ = rng;
  return true;
}

uint64_t RandomPolicy::UniformIndex(std::mt19937_64& rng, uint64_t n) {
  H2O_CHECK(n >= 1);
  // 2^64 mod n, computed in 64 bits: (2^64 - n) mod n.
  const uint64_t reject_below = (0 - n) % n;
  uint64_t r = rng();
  while (r < reject_below) r = rng();
  return r % n;
}

int32_t RandomPolicy::ChooseVictim(const HeadMetadata& meta) {
  const int64_t window = RecentWindowStart(meta, recent_);
  int32_t n_candidates = 0;
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    if (meta.pos[s] >= 0 && meta.pos[s] < window) ++n_candidates;
  }
  H2O_CHECK(n_candidates >= 1);
  int64_t pick = static_cast<int64_t>(UniformIndex(rng_, static_cast<uint64_t>(n_candidates)));
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    if (meta.pos[s] >= 0 && meta.pos[s] < window && pick-- == 0) return s;
  }
  H2O_CHECK(false && "random policy lost its candidate");
  return -1;
}


// ---- descriptors (kv/policy_registry.h) --------------------------------------------------------

namespace {

std::string Kv(const char* key, uint64_t value) { return fmt::format("{}={}", key, value); }

constexpr KvKey kLocalKeys[] = {{"recent", true, 0}};

constexpr KvKey kSinkKeys[] = {{"sinks", false, 4}, {"recent", true, 0}};

Status CheckSink(const KvPlan& plan, std::string_view spec_text, std::string_view prompt_note) {
  if (plan.recent >= 1) return Status::Ok();
  // With no window the newest token would be evicted right after it is
  // appended, leaving the model nothing but the sinks.
  return Status::Error(
      fmt::format("sink needs recent >= 1 ({} gives recent=0{})", spec_text, prompt_note));
}

constexpr std::string_view kScoreWords[] = {"sum", "mean", "ema"};
constexpr KvKey kH2oKeys[] = {{"heavy", true, 0},
                              {"recent", true, 0},
                              {"score", false, 0, KvValueKind::kWord, kScoreWords},
                              {"decay", false, 0, KvValueKind::kFraction},
                              {"pyramid", false, 0, KvValueKind::kInteger}};

std::string DescribeH2o(const KvPlan& plan) {
  std::string text = "h2o:" + Kv("heavy", plan.heavy) + "," + Kv("recent", plan.recent);
  if (plan.score != "sum") text += ",score=" + plan.score;
  if (plan.score == "ema") text += fmt::format(",decay={}", plan.decay);
  if (plan.pyramid > 0) text += ",pyramid=" + std::to_string(plan.pyramid);
  return text;
}

std::unique_ptr<EvictionPolicy> MakeH2o(const KvPlan& plan, int32_t) {
  H2oScore score;
  if (plan.score == "mean") score = H2oScore::Mean();
  if (plan.score == "ema") score = H2oScore::Ema(plan.decay);
  return std::make_unique<H2oPolicy>(plan.heavy, plan.recent, score);
}

constexpr KvKey kH2onlyKeys[] = {{"heavy", true, 0}};
constexpr KvKey kTovaKeys[] = {{"k", true, 0}};
constexpr KvKey kRandomKeys[] = {
    {"k", true, 0}, {"recent", false, 0}, {"seed", false, 0, KvValueKind::kInteger}};

}  // namespace

extern const PolicyDescriptor kLocalPolicyDescriptor{
    .name = "local",
    .keys = kLocalKeys,
    .split = {BudgetSplit::Kind::kWhole, "recent"},
    .describe = [](const KvPlan& p) { return "local:" + Kv("recent", p.recent); },
    .make = [](const KvPlan& p, int32_t) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<LocalPolicy>(p.recent);
    },
};

extern const PolicyDescriptor kSinkPolicyDescriptor{
    .name = "sink",
    .keys = kSinkKeys,
    .pos_shift = true,
    .split = {BudgetSplit::Kind::kAfterFixed, "sinks", "recent", 4},  // StreamingLLM's 4 sinks
    .check = CheckSink,
    .describe = [](const KvPlan& p) {
      return "sink:" + Kv("sinks", p.sinks) + "," + Kv("recent", p.recent);
    },
    .make = [](const KvPlan& p, int32_t) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<SinkPolicy>(p.sinks, p.recent);
    },
};

extern const PolicyDescriptor kH2oPolicyDescriptor{
    .name = "h2o",
    .keys = kH2oKeys,
    .pos_shift = true,
    .split = {BudgetSplit::Kind::kHalves, "heavy", "recent"},
    .pyramid_fixed = &KvPlan::recent,
    .describe = DescribeH2o,
    .make = MakeH2o,
};

extern const PolicyDescriptor kH2onlyPolicyDescriptor{
    .name = "h2only",
    .keys = kH2onlyKeys,
    .split = {BudgetSplit::Kind::kWhole, "heavy"},
    .describe = [](const KvPlan& p) { return "h2only:" + Kv("heavy", p.heavy); },
    .make = [](const KvPlan& p, int32_t) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<H2onlyPolicy>(p.heavy);
    },
};

extern const PolicyDescriptor kTovaPolicyDescriptor{
    .name = "tova",
    .keys = kTovaKeys,
    .split = {BudgetSplit::Kind::kWhole, "k"},
    .describe = [](const KvPlan& p) { return "tova:" + Kv("k", p.k); },
    .make = [](const KvPlan& p, int32_t) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<TovaPolicy>(p.k);
    },
};

extern const PolicyDescriptor kRandomPolicyDescriptor{
    .name = "random",
    .keys = kRandomKeys,
    .split = {BudgetSplit::Kind::kWhole, "k"},  // no recent window, seed 0
    .describe = [](const KvPlan& p) {
      return "random:" + Kv("k", p.k) + "," + Kv("recent", p.recent) + "," + Kv("seed", p.seed);
    },
    .make = [](const KvPlan& p, int32_t) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<RandomPolicy>(p.k, p.recent, p.seed);
    },
};

}  // namespace h2o
