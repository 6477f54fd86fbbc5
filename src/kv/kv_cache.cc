#include "kv/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "core/resident_memory.h"
#include "core/status.h"
#include "kernels/quant.h"
#include "kv/policies.h"

namespace h2o {

namespace {

// Bytes of a token's K and V rows for one (layer, head).
size_t CheckedTokenBytes(const KvCacheConfig& config) {
  H2O_CHECK(config.n_layer > 0 && config.n_head_kv > 0 && config.head_dim > 0);
  H2O_CHECK(config.budget >= 1 && config.capacity >= config.budget);
  H2O_CHECK(CheckKvTypes(config.types, config.head_dim).ok());
  H2O_CHECK(config.layer_window.empty() ||
            config.layer_window.size() == static_cast<size_t>(config.n_layer));
  for (int32_t w : config.layer_window) H2O_CHECK(w >= 0);
  H2O_CHECK(config.layer_budgets.empty() ||
            config.layer_budgets.size() == static_cast<size_t>(config.n_layer));
  for (int32_t l = 0; l < static_cast<int32_t>(config.layer_budgets.size()); ++l) {
    H2O_CHECK(config.windowed(l) || config.layer_budgets[l] >= 1);
  }
  H2O_CHECK(config.window_chunk >= 0);
  return config.types.TokenBytes(config.head_dim);
}

}  // namespace

bool KvCacheConfig::any_windowed() const {
  return std::any_of(layer_window.begin(), layer_window.end(), [](int32_t w) { return w > 0; });
}

int32_t KvCacheConfig::spill_slots() const {
  int32_t most = 0;
  for (int32_t l = 0; l < n_layer; ++l) most = std::max(most, layer_capacity(l) - layer_budget(l));
  return most;
}

int32_t KvCacheConfig::max_capacity() const {
  int32_t most = 0;
  for (int32_t l = 0; l < n_layer; ++l) most = std::max(most, layer_capacity(l));
  return most;
}

std::vector<KvCache::LayerStart> KvCache::Layout(const KvCacheConfig& c) {
  std::vector<LayerStart> starts(static_cast<size_t>(c.n_layer) + 1);
  const size_t heads = static_cast<size_t>(c.n_head_kv);
  for (int32_t l = 0; l < c.n_layer; ++l) {
    const size_t slots = heads * c.layer_capacity(l);
    starts[l + 1].row = starts[l].row + heads * c.layer_budget(l);
    starts[l + 1].slot = starts[l].slot + slots;
    starts[l + 1].scored = starts[l].scored + (c.windowed(l) ? 0 : slots);
  }
  return starts;
}

KvCache::KvCache(const KvCacheConfig& config, std::unique_ptr<EvictionPolicy> policy)
    : config_(config),
      policy_(std::move(policy)),
      k_row_bytes_((CheckedTokenBytes(config), RowBytes(config.types.k, config.head_dim))),
      v_row_bytes_(RowBytes(config.types.v, config.head_dim)),
      layout_(Layout(config)),
      spill_slots_(config.spill_slots()) {
  H2O_CHECK(policy_ != nullptr);
  const size_t sizes[] = {layout_.back().row * k_row_bytes_, layout_.back().row * v_row_bytes_,
                          static_cast<size_t>(config.n_head_kv) * spill_slots_ * k_row_bytes_,
                          static_cast<size_t>(config.n_head_kv) * spill_slots_ * v_row_bytes_};
  auto mapped =
      HugePageBuffer::Allocate(std::max<size_t>(1, sizes[0] + sizes[1] + sizes[2] + sizes[3]),
                               /*advise=*/false);
  // As the operator new it replaces would.
  if (!mapped.ok()) throw std::bad_alloc();
  rows_ = std::move(mapped).value();
  uint8_t* next = rows_.data();
  size_t i = 0;
  for (uint8_t** rows : {&k_, &v_, &k_spill_, &v_spill_}) {
    *rows = next;
    next += sizes[i++];
  }
  const size_t n_heads = static_cast<size_t>(config.n_layer) * config.n_head_kv;
  const LayerStart& totals = layout_.back();
  pos_.assign(totals.slot, kFreeSlot);
  if (policy_->needs_scores()) score_.assign(totals.scored, 0.0);
  if (policy_->needs_step_attention()) step_attn_.assign(totals.scored, 0.0f);
  spill_layer_.assign(static_cast<size_t>(config.n_head_kv), -1);
  freed_home_.assign(static_cast<size_t>(config.n_head_kv) * spill_slots_, 0);
  count_.assign(n_heads, 0);
  high_water_.assign(n_heads, 0);
  newest_pos_.assign(n_heads, -1);
}

size_t KvCache::HeadIndex(int32_t layer, int32_t head) const {
  return static_cast<size_t>(layer) * config_.n_head_kv + head;
}

size_t KvCache::SlotIndex(int32_t layer, int32_t head, int32_t slot) const {
  return layout_[layer].slot + static_cast<size_t>(head) * config_.layer_capacity(layer) + slot;
}

size_t KvCache::ScoredIndex(int32_t layer, int32_t head, int32_t slot) const {
  return layout_[layer].scored + static_cast<size_t>(head) * config_.layer_capacity(layer) + slot;
}

uint8_t* KvCache::RowIn(uint8_t* home, uint8_t* spill, size_t row_bytes, int32_t layer,
                        int32_t head, int32_t slot) {
  const int32_t budget = config_.layer_budget(layer);
  if (slot < budget) {
    return home + (layout_[layer].row + static_cast<size_t>(head) * budget + slot) * row_bytes;
  }
  return spill + (static_cast<size_t>(head) * spill_slots_ + slot - budget) * row_bytes;
}

uint8_t* KvCache::KRow(int32_t layer, int32_t head, int32_t slot) {
  return RowIn(k_, k_spill_, k_row_bytes_, layer, head, slot);
}

uint8_t* KvCache::VRow(int32_t layer, int32_t head, int32_t slot) {
  return RowIn(v_, v_spill_, v_row_bytes_, layer, head, slot);
}

int32_t KvCache::TakeSlot(int32_t layer, int32_t head, int32_t pos) {
  const size_t h = HeadIndex(layer, head);
  H2O_CHECK(count_[h] < config_.layer_capacity(layer));
  // Between forward passes every written slot holds a token (see
  // MoveSpillHome), so the next free slot is always the high-water mark.
  H2O_CHECK(count_[h] == high_water_[h]);
  const int32_t slot = high_water_[h]++;
  if (slot >= config_.layer_budget(layer)) {
    // One layer's tokens in the head's spill at a time.
    int32_t& spilled = spill_layer_[head];
    const bool claimed = spilled < 0;
    H2O_CHECK(claimed || spilled == layer);
    spilled = layer;
  }
  pos_[SlotIndex(layer, head, slot)] = pos;
  if (double* score = scores(layer, head)) {
    // Each token appended is one more query, which first ages the head's
    // scores (h2o:score=ema; kv/policies.h, H2oScore).
    if (const double decay = policy_->score_decay(); decay != 1.0) {
      for (int32_t s = 0; s < slot; ++s) score[s] *= decay;
    }
    score[slot] = 0.0;
  }
  if (float* step = step_attention(layer, head)) step[slot] = 0.0f;
  ++count_[h];
  if (pos > newest_pos_[h]) newest_pos_[h] = pos;
  return slot;
}

int32_t KvCache::Append(int32_t layer, int32_t head, int32_t pos, const float* k, const float* v) {
  const int32_t slot = TakeSlot(layer, head, pos);
  // Quantized once here; attention reads the stored rows as they are.
  kernels::QuantizeRow(config_.types.k, k, KRow(layer, head, slot), config_.head_dim);
  kernels::QuantizeRow(config_.types.v, v, VRow(layer, head, slot), config_.head_dim);
  return slot;
}

void KvCache::AppendKept(const KvCache& from) {
  const KvCacheConfig& f = from.config_;
  H2O_CHECK(f.n_layer == config_.n_layer && f.n_head_kv == config_.n_head_kv &&
            f.head_dim == config_.head_dim && f.types == config_.types &&
            f.layer_window == config_.layer_window);
  for (const int32_t spilled : from.spill_layer_) H2O_CHECK(spilled < 0);
  for (int32_t layer = 0; layer < config_.n_layer; ++layer) {
    for (int32_t head = 0; head < config_.n_head_kv; ++head) {
      const KvHeadView rows = from.View(layer, head);
      for (int32_t s = 0; s < rows.n_slots; ++s) {
        if (rows.pos[s] == kFreeSlot) continue;
        const int32_t slot = TakeSlot(layer, head, rows.pos[s]);
        H2O_CHECK(slot < config_.layer_budget(layer));  // never into the shared spill
        std::memcpy(KRow(layer, head, slot), rows.KRow(s), k_row_bytes_);
        std::memcpy(VRow(layer, head, slot), rows.VRow(s), v_row_bytes_);
      }
    }
  }
}

void KvCache::PrefetchNextAppend(int32_t layer, int32_t head) {
  const int32_t slot = high_water_[HeadIndex(layer, head)];
  if (slot >= config_.layer_capacity(layer)) return;
  for (const auto& [row, bytes] : {std::pair{KRow(layer, head, slot), k_row_bytes_},
                                   std::pair{VRow(layer, head, slot), v_row_bytes_}}) {
    for (size_t line = 0; line < bytes; line += 64) __builtin_prefetch(row + line, 1, 3);
  }
}

KvHeadView KvCache::View(int32_t layer, int32_t head) const {
  const int32_t budget = config_.layer_budget(layer);
  const size_t home_first = layout_[layer].row + static_cast<size_t>(head) * budget;
  const size_t spill_first = static_cast<size_t>(head) * spill_slots_;
  KvHeadView view;
  view.k = k_ + home_first * k_row_bytes_;
  view.v = v_ + home_first * v_row_bytes_;
  view.k_spill = k_spill_ + spill_first * k_row_bytes_;
  view.v_spill = v_spill_ + spill_first * v_row_bytes_;
  view.pos = &pos_[SlotIndex(layer, head, 0)];
  view.n_slots = high_water_[HeadIndex(layer, head)];
  view.n_home = budget;
  view.head_dim = config_.head_dim;
  view.k_type = config_.types.k;
  view.v_type = config_.types.v;
  return view;
}

double* KvCache::scores(int32_t layer, int32_t head) {
  if (score_.empty() || config_.windowed(layer)) return nullptr;
  return &score_[ScoredIndex(layer, head, 0)];
}

const double* KvCache::scores(int32_t layer, int32_t head) const {
  if (score_.empty() || config_.windowed(layer)) return nullptr;
  return &score_[ScoredIndex(layer, head, 0)];
}

float* KvCache::step_attention(int32_t layer, int32_t head) {
  if (step_attn_.empty() || config_.windowed(layer)) return nullptr;
  return &step_attn_[ScoredIndex(layer, head, 0)];
}

int32_t KvCache::count(int32_t layer, int32_t head) const { return count_[HeadIndex(layer, head)]; }

KvCache::HeadScoring KvCache::BeginAttention(int32_t layer, int32_t head, int32_t n_queries) {
  HeadScoring s;
  const size_t n_slots = static_cast<size_t>(View(layer, head).n_slots);
  s.step_attention = step_attention(layer, head);
  if (s.step_attention != nullptr) std::fill_n(s.step_attention, n_slots, 0.0f);
  s.scores = scores(layer, head);
  // SnapKV's observation window: only the pass's last w queries score,
  // into cleared scores.
  if (const int32_t w = policy_->observation_window(); w > 0 && s.scores != nullptr) {
    std::fill_n(s.scores, n_slots, 0.0);
    s.first_scored = std::max(0, n_queries - w);
  }
  return s;
}

HeadMetadata KvCache::Metadata(int32_t layer, int32_t head) {
  const size_t h = HeadIndex(layer, head);
  HeadMetadata meta;
  meta.pos = &pos_[SlotIndex(layer, head, 0)];
  meta.score = scores(layer, head);
  meta.step_attention = step_attention(layer, head);
  meta.n_slots = high_water_[h];
  meta.count = count_[h];
  meta.newest_pos = newest_pos_[h];
  return meta;
}

void KvCache::Evict(int32_t layer, int32_t head, int32_t slot, FreedSlots& freed) {
  const size_t h = HeadIndex(layer, head);
  int32_t& pos = pos_[SlotIndex(layer, head, slot)];
  H2O_CHECK(pos != kFreeSlot);
  pos = kFreeSlot;
  if (double* score = scores(layer, head)) score[slot] = 0.0;
  if (float* step = step_attention(layer, head)) step[slot] = 0.0f;
  --count_[h];
  // Victims are chosen only while a head is over its budget, so it has
  // spilled: at most spill_slots_ of them are home slots.
  if (slot < config_.layer_budget(layer)) {
    H2O_CHECK(freed.count < freed.capacity);
    freed.slots[freed.count++] = slot;
  }
}

// Keeping the W highest positions is what LocalPolicy does; one pass with
// the window's first position replaces W scans for the lowest.
void KvCache::EvictBelowWindow(int32_t layer, int32_t head, FreedSlots& freed) {
  const int32_t window = config_.layer_window[layer];
  const HeadMetadata meta = Metadata(layer, head);
  if (meta.count <= window) return;
  const int64_t first_kept = RecentWindowStart(meta, window);
  for (int32_t s = 0; s < meta.n_slots; ++s) {
    if (meta.pos[s] >= 0 && meta.pos[s] < first_kept) Evict(layer, head, s, freed);
  }
}

void KvCache::EvictOverBudget(int32_t layer) {
  for (int32_t head = 0; head < config_.n_head_kv; ++head) EvictHeadOverBudget(layer, head);
}

void KvCache::EvictHeadOverBudget(int32_t layer, int32_t head) {
  // data(): a cache without spill slots has an empty freed_home_.
  FreedSlots freed{freed_home_.data() + static_cast<size_t>(head) * spill_slots_, spill_slots_};
  if (config_.windowed(layer)) {
    EvictBelowWindow(layer, head, freed);
  } else {
    const int32_t budget = config_.layer_budget(layer);
    const int32_t pinned = config_.n_keep;
    if (count_[HeadIndex(layer, head)] > budget && pinned > 0) {
      // Over a budget that holds them, the pinned tokens are all present.
      const int32_t* pos = &pos_[SlotIndex(layer, head, 0)];
      for (int32_t slot = 0; slot < pinned; ++slot) H2O_CHECK(pos[slot] == slot);
    }
    while (count_[HeadIndex(layer, head)] > budget) {
      // The policy chooses among the slots after the pinned ones.
      HeadMetadata meta = Metadata(layer, head);
      meta.pos += pinned;
      if (meta.score != nullptr) meta.score += pinned;
      if (meta.step_attention != nullptr) meta.step_attention += pinned;
      meta.n_slots -= pinned;
      meta.count -= pinned;
      const int32_t victim = policy_->ChooseVictim(meta);
      H2O_CHECK(victim >= 0 && victim < meta.n_slots);
      Evict(layer, head, victim + pinned, freed);
    }
  }
  MoveSpillHome(layer, head, freed);
  if (spill_layer_[head] == layer) spill_layer_[head] = -1;
}

// Appends fill the home slots [0, budget) before the spill, and eviction
// brings count down to exactly the budget, so each spilled survivor has one
// home slot freed by this head's evictions to move into, and afterwards
// every written slot holds a token again.
void KvCache::MoveSpillHome(int32_t layer, int32_t head, FreedSlots& freed) {
  const size_t h = HeadIndex(layer, head);
  const int32_t budget = config_.layer_budget(layer);
  if (high_water_[h] <= budget) {
    H2O_CHECK(freed.count == 0);
    return;
  }
  int32_t* pos = &pos_[SlotIndex(layer, head, 0)];
  double* score = scores(layer, head);
  float* step = step_attention(layer, head);
  for (int32_t from = budget; from < high_water_[h]; ++from) {
    if (pos[from] == kFreeSlot) continue;
    H2O_CHECK(freed.count > 0);
    const int32_t to = freed.slots[--freed.count];
    std::memcpy(KRow(layer, head, to), KRow(layer, head, from), k_row_bytes_);
    std::memcpy(VRow(layer, head, to), VRow(layer, head, from), v_row_bytes_);
    pos[to] = pos[from];
    pos[from] = kFreeSlot;
    if (score != nullptr) std::swap(score[to], score[from]);
    if (step != nullptr) std::swap(step[to], step[from]);
  }
  H2O_CHECK(freed.count == 0);
  high_water_[h] = budget;
}

void KvCache::Clear() {
  std::fill(pos_.begin(), pos_.end(), kFreeSlot);
  std::fill(score_.begin(), score_.end(), 0.0);
  std::fill(step_attn_.begin(), step_attn_.end(), 0.0f);
  std::fill(count_.begin(), count_.end(), 0);
  std::fill(high_water_.begin(), high_water_.end(), 0);
  std::fill(newest_pos_.begin(), newest_pos_.end(), -1);
  std::fill(spill_layer_.begin(), spill_layer_.end(), -1);
}

void KvCache::CommitRows() {
  // PopulateForWrite may leave its range's bytes unspecified.
  H2O_CHECK(std::all_of(high_water_.begin(), high_water_.end(), [](int32_t h) { return h == 0; }));
  // Huge pages where whole ones fit: a batched decode step reads every
  // sequence's rows at every layer, a page each few heads, so in 4 KiB
  // pages most reads missed the TLB.
  rows_.AdviseWholePages();
  PopulateForWrite(rows_.data(), rows_.size());
}

void KvCache::CopyFrom(const KvCache& other) {
  H2O_CHECK(other.config_ == config_);
  H2O_CHECK(other.policy_->name() == policy_->name());
  // Between forward passes nothing is spilled (every layer has evicted), so
  // all tokens have home slots.
  for (int32_t spilled : other.spill_layer_) H2O_CHECK(spilled < 0);
  // Only slots below each head's high-water mark are ever read, so only
  // those are copied (a full cache of a long context is mostly unwritten).
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    for (int32_t head = 0; head < config_.n_head_kv; ++head) {
      const size_t h = HeadIndex(l, head);
      const size_t used = static_cast<size_t>(other.high_water_[h]);
      const size_t row = layout_[l].row + static_cast<size_t>(head) * config_.layer_budget(l);
      std::memcpy(&k_[row * k_row_bytes_], &other.k_[row * k_row_bytes_], used * k_row_bytes_);
      std::memcpy(&v_[row * v_row_bytes_], &other.v_[row * v_row_bytes_], used * v_row_bytes_);
      const size_t first = SlotIndex(l, head, 0);
      std::copy_n(&other.pos_[first], used, &pos_[first]);
      if (double* score = scores(l, head)) std::copy_n(other.scores(l, head), used, score);
      if (float* step = step_attention(l, head)) {
        std::copy_n(&other.step_attn_[ScoredIndex(l, head, 0)], used, step);
      }
    }
  }
  count_ = other.count_;
  high_water_ = other.high_water_;
  newest_pos_ = other.newest_pos_;
  policy_->CopyStateFrom(*other.policy_);
}

size_t KvCache::BytesFor(const KvCacheConfig& c, const LayerStart& totals,
                         const EvictionPolicy& policy) {
  const size_t rows = totals.row + static_cast<size_t>(c.n_head_kv) * c.spill_slots();
  size_t per_scored_slot = 0;
  if (policy.needs_scores()) per_scored_slot += sizeof(double);
  if (policy.needs_step_attention()) per_scored_slot += sizeof(float);
  return rows * c.types.TokenBytes(c.head_dim) + totals.slot * sizeof(int32_t) /*pos*/ +
         static_cast<size_t>(c.n_head_kv) * c.spill_slots() * sizeof(int32_t) /*freed_home_*/ +
         totals.scored * per_scored_slot;
}

size_t KvCache::HeldBytes() const {
  size_t tokens = 0;
  for (int32_t l = 0; l < config_.n_layer; ++l) {
    for (int32_t g = 0; g < config_.n_head_kv; ++g) tokens += static_cast<size_t>(count(l, g));
  }
  return tokens * (k_row_bytes_ + v_row_bytes_);
}

size_t KvCache::AllocatedBytes() const { return BytesFor(config_, layout_.back(), *policy_); }

size_t KvCache::AllocatedBytesFor(const KvCacheConfig& c, const EvictionPolicy& policy) {
  CheckedTokenBytes(c);
  return BytesFor(c, Layout(c).back(), policy);
}

size_t KvCache::RowBytesFor(const KvCacheConfig& c) {
  const size_t token_bytes = CheckedTokenBytes(c);
  return (Layout(c).back().row + static_cast<size_t>(c.n_head_kv) * c.spill_slots()) * token_bytes;
}

size_t KvCache::FullCacheBytes(int32_t n_layer, int32_t n_head_kv, int32_t head_dim,
                               const KvTypes& types, int64_t n_tokens,
                               std::span<const int32_t> layer_window) {
  H2O_CHECK(layer_window.empty() || layer_window.size() == static_cast<size_t>(n_layer));
  size_t rows_per_head = 0;
  for (int32_t l = 0; l < n_layer; ++l) {
    const int32_t window = layer_window.empty() ? 0 : layer_window[l];
    rows_per_head +=
        static_cast<size_t>(window > 0 ? std::min<int64_t>(n_tokens, window) : n_tokens);
  }
  return rows_per_head * n_head_kv * types.TokenBytes(head_dim);
}

}  // namespace h2o
