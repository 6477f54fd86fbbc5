#include "kv/kv_cache.h"

#include <algorithm>
#include <cstring>

#include "core/status.h"
#include "kernels/fp16.h"

namespace h2o {

namespace {

size_t CheckedRowBytes(const KvCacheConfig& config) {
  H2O_CHECK(config.n_layer > 0 && config.n_head_kv > 0 && config.head_dim > 0);
  H2O_CHECK(config.budget >= 1 && config.capacity >= config.budget);
  H2O_CHECK(config.type == TensorType::kF32 || config.type == TensorType::kF16);
  return RowBytes(config.type, config.head_dim);
}

size_t HomeRows(const KvCacheConfig& c) {
  return static_cast<size_t>(c.n_layer) * c.n_head_kv * c.budget;
}

size_t SpillRows(const KvCacheConfig& c) {
  return static_cast<size_t>(c.n_head_kv) * (c.capacity - c.budget);
}

}  // namespace

KvCache::KvCache(const KvCacheConfig& config, std::unique_ptr<EvictionPolicy> policy)
    : config_(config),
      policy_(std::move(policy)),
      row_bytes_(CheckedRowBytes(config)),
      k_(HomeRows(config) * row_bytes_),
      v_(HomeRows(config) * row_bytes_),
      k_spill_(SpillRows(config) * row_bytes_),
      v_spill_(SpillRows(config) * row_bytes_) {
  H2O_CHECK(policy_ != nullptr);
  const size_t n_heads = static_cast<size_t>(config.n_layer) * config.n_head_kv;
  const size_t n_slots = n_heads * config.capacity;
  pos_.assign(n_slots, kFreeSlot);
  if (policy_->needs_scores()) score_.assign(n_slots, 0.0);
  if (policy_->needs_step_attention()) step_attn_.assign(n_slots, 0.0f);
  free_slots_.assign(n_slots, 0);
  count_.assign(n_heads, 0);
  high_water_.assign(n_heads, 0);
  newest_pos_.assign(n_heads, -1);
  free_top_.assign(n_heads, 0);
}

size_t KvCache::HeadIndex(int32_t layer, int32_t head) const {
  return static_cast<size_t>(layer) * config_.n_head_kv + head;
}

size_t KvCache::SlotIndex(int32_t layer, int32_t head, int32_t slot) const {
  return HeadIndex(layer, head) * config_.capacity + slot;
}

uint8_t* KvCache::RowIn(UninitializedRows& home, UninitializedRows& spill, int32_t layer,
                        int32_t head, int32_t slot) {
  const int32_t budget = config_.budget;
  if (slot < budget) return &home[(HeadIndex(layer, head) * budget + slot) * row_bytes_];
  return &spill[(static_cast<size_t>(head) * (config_.capacity - budget) + slot - budget) *
                row_bytes_];
}

uint8_t* KvCache::KRow(int32_t layer, int32_t head, int32_t slot) {
  return RowIn(k_, k_spill_, layer, head, slot);
}

uint8_t* KvCache::VRow(int32_t layer, int32_t head, int32_t slot) {
  return RowIn(v_, v_spill_, layer, head, slot);
}

static void StoreRow(const float* src, uint8_t* dst, int32_t n, TensorType type) {
  if (type == TensorType::kF32) {
    std::memcpy(dst, src, sizeof(float) * n);
    return;
  }
  auto* out = reinterpret_cast<uint16_t*>(dst);
  for (int32_t i = 0; i < n; ++i) out[i] = kernels::F32ToF16(src[i]);
}

int32_t KvCache::Append(int32_t layer, int32_t head, int32_t pos, const float* k, const float* v) {
  const size_t h = HeadIndex(layer, head);
  H2O_CHECK(count_[h] < config_.capacity);
  int32_t slot;
  if (free_top_[h] > 0) {
    slot = free_slots_[h * config_.capacity + --free_top_[h]];
  } else {
    slot = high_water_[h]++;
  }
  if (slot >= config_.budget) {
    H2O_CHECK(spill_layer_ < 0 || spill_layer_ == layer);
    spill_layer_ = layer;
  }
  const size_t s = SlotIndex(layer, head, slot);
  StoreRow(k, KRow(layer, head, slot), config_.head_dim, config_.type);
  StoreRow(v, VRow(layer, head, slot), config_.head_dim, config_.type);
  pos_[s] = pos;
  if (!score_.empty()) score_[s] = 0.0;
  if (!step_attn_.empty()) step_attn_[s] = 0.0f;
  ++count_[h];
  if (pos > newest_pos_[h]) newest_pos_[h] = pos;
  return slot;
}

KvHeadView KvCache::View(int32_t layer, int32_t head) const {
  const size_t first = SlotIndex(layer, head, 0);
  const int32_t budget = config_.budget;
  const size_t spill_first = static_cast<size_t>(head) * (config_.capacity - budget);
  KvHeadView view;
  view.k = &k_[HeadIndex(layer, head) * budget * row_bytes_];
  view.v = &v_[HeadIndex(layer, head) * budget * row_bytes_];
  view.k_spill = k_spill_.data() + spill_first * row_bytes_;
  view.v_spill = v_spill_.data() + spill_first * row_bytes_;
  view.pos = &pos_[first];
  view.n_slots = high_water_[HeadIndex(layer, head)];
  view.n_home = budget;
  view.head_dim = config_.head_dim;
  view.k_type = config_.type;
  view.v_type = config_.type;
  return view;
}

double* KvCache::scores(int32_t layer, int32_t head) {
  return score_.empty() ? nullptr : &score_[SlotIndex(layer, head, 0)];
}

const double* KvCache::scores(int32_t layer, int32_t head) const {
  return score_.empty() ? nullptr : &score_[SlotIndex(layer, head, 0)];
}

float* KvCache::step_attention(int32_t layer, int32_t head) {
  return step_attn_.empty() ? nullptr : &step_attn_[SlotIndex(layer, head, 0)];
}

int32_t KvCache::count(int32_t layer, int32_t head) const { return count_[HeadIndex(layer, head)]; }

void KvCache::Evict(size_t head_index, int32_t slot) {
  const size_t s = head_index * config_.capacity + slot;
  H2O_CHECK(pos_[s] != kFreeSlot);
  pos_[s] = kFreeSlot;
  if (!score_.empty()) score_[s] = 0.0;
  if (!step_attn_.empty()) step_attn_[s] = 0.0f;
  --count_[head_index];
  free_slots_[head_index * config_.capacity + free_top_[head_index]++] = slot;
}

void KvCache::EvictOverBudget(int32_t layer) {
  for (int32_t head = 0; head < config_.n_head_kv; ++head) {
    const size_t h = HeadIndex(layer, head);
    while (count_[h] > config_.budget) {
      const size_t first = SlotIndex(layer, head, 0);
      HeadMetadata meta;
      meta.pos = &pos_[first];
      meta.score = score_.empty() ? nullptr : &score_[first];
      meta.step_attention = step_attn_.empty() ? nullptr : &step_attn_[first];
      meta.n_slots = high_water_[h];
      meta.count = count_[h];
      meta.newest_pos = newest_pos_[h];
      const int32_t victim = policy_->ChooseVictim(meta);
      H2O_CHECK(victim >= 0 && victim < high_water_[h]);
      Evict(h, victim);
    }
  }
  if (spill_layer_ == layer) {
    for (int32_t head = 0; head < config_.n_head_kv; ++head) MoveSpillHome(layer, head);
    spill_layer_ = -1;
  }
}

// After eviction count <= budget, and slots [0, budget) had all been
// written before the head spilled, so every home slot not holding a token
// is on the free stack: there is one for each spilled survivor.
void KvCache::MoveSpillHome(int32_t layer, int32_t head) {
  const size_t h = HeadIndex(layer, head);
  const int32_t budget = config_.budget;
  if (high_water_[h] <= budget) return;
  int32_t* free_stack = &free_slots_[h * config_.capacity];
  int32_t top = 0;
  for (int32_t i = 0; i < free_top_[h]; ++i) {
    if (free_stack[i] < budget) free_stack[top++] = free_stack[i];
  }
  for (int32_t from = budget; from < high_water_[h]; ++from) {
    const size_t f = SlotIndex(layer, head, from);
    if (pos_[f] == kFreeSlot) continue;
    H2O_CHECK(top > 0);
    const int32_t to = free_stack[--top];
    const size_t t = SlotIndex(layer, head, to);
    std::memcpy(KRow(layer, head, to), KRow(layer, head, from), row_bytes_);
    std::memcpy(VRow(layer, head, to), VRow(layer, head, from), row_bytes_);
    pos_[t] = pos_[f];
    pos_[f] = kFreeSlot;
    if (!score_.empty()) std::swap(score_[t], score_[f]);
    if (!step_attn_.empty()) std::swap(step_attn_[t], step_attn_[f]);
  }
  free_top_[h] = top;
  high_water_[h] = budget;
}

void KvCache::Clear() {
  std::fill(pos_.begin(), pos_.end(), kFreeSlot);
  std::fill(score_.begin(), score_.end(), 0.0);
  std::fill(step_attn_.begin(), step_attn_.end(), 0.0f);
  std::fill(count_.begin(), count_.end(), 0);
  std::fill(high_water_.begin(), high_water_.end(), 0);
  std::fill(newest_pos_.begin(), newest_pos_.end(), -1);
  std::fill(free_top_.begin(), free_top_.end(), 0);
  spill_layer_ = -1;
}

void KvCache::CopyFrom(const KvCache& other) {
  const KvCacheConfig& o = other.config_;
  H2O_CHECK(o.n_layer == config_.n_layer && o.n_head_kv == config_.n_head_kv &&
            o.head_dim == config_.head_dim && o.budget == config_.budget &&
            o.capacity == config_.capacity && o.type == config_.type);
  H2O_CHECK(other.policy_->name() == policy_->name());
  // Between forward passes nothing is spilled (every layer has evicted), so
  // all tokens have home slots.
  H2O_CHECK(other.spill_layer_ < 0);
  // Only slots below each head's high-water mark are ever read, so only
  // those are copied (a full cache of a long context is mostly unwritten).
  const size_t n_heads = count_.size();
  const size_t cap = static_cast<size_t>(config_.capacity);
  const size_t budget = static_cast<size_t>(config_.budget);
  for (size_t h = 0; h < n_heads; ++h) {
    const size_t first = h * cap;
    const size_t used = static_cast<size_t>(other.high_water_[h]);
    const size_t rows = h * budget * row_bytes_;
    std::memcpy(&k_[rows], &other.k_[rows], used * row_bytes_);
    std::memcpy(&v_[rows], &other.v_[rows], used * row_bytes_);
    std::copy_n(&other.pos_[first], used, &pos_[first]);
    if (!score_.empty()) std::copy_n(&other.score_[first], used, &score_[first]);
    if (!step_attn_.empty()) std::copy_n(&other.step_attn_[first], used, &step_attn_[first]);
    std::copy_n(&other.free_slots_[first], other.free_top_[h], &free_slots_[first]);
  }
  count_ = other.count_;
  high_water_ = other.high_water_;
  newest_pos_ = other.newest_pos_;
  free_top_ = other.free_top_;
  spill_layer_ = -1;
  policy_->CopyStateFrom(*other.policy_);
}

size_t KvCache::AllocatedBytes() const { return AllocatedBytesFor(config_, *policy_); }

size_t KvCache::AllocatedBytesFor(const KvCacheConfig& c, const EvictionPolicy& policy) {
  const size_t n_heads = static_cast<size_t>(c.n_layer) * c.n_head_kv;
  const size_t rows =
      n_heads * c.budget + static_cast<size_t>(c.n_head_kv) * (c.capacity - c.budget);
  size_t per_slot = sizeof(int32_t) /*pos*/ + sizeof(int32_t) /*free list*/;
  if (policy.needs_scores()) per_slot += sizeof(double);
  if (policy.needs_step_attention()) per_slot += sizeof(float);
  return rows * 2 * RowBytes(c.type, c.head_dim) + n_heads * c.capacity * per_slot;
}

size_t KvCache::FullCacheBytes(int32_t n_layer, int32_t n_head_kv, int32_t head_dim,
                               TensorType type, int64_t n_tokens) {
  return 2 * static_cast<size_t>(n_layer) * n_head_kv * n_tokens * RowBytes(type, head_dim);
}

}  // namespace h2o
