// KvCache: preallocated K/V slots per (layer, KV head), with the per-slot
// metadata (original position, accumulated attention score) that eviction
// policies read. Storage, metadata and the victim choice are kept apart:
// this class owns storage and metadata; an EvictionPolicy (kv_policy.h)
// picks victims; EvictOverBudget() applies the choice.
//
// Invariants, per (layer, head):
//   - slots [0, high_water) have been written at least once; a slot whose
//     position is kFreeSlot holds an evicted token and is reused by the
//     next Append (nothing is allocated after construction);
//   - count <= capacity, and after EvictOverBudget(), count <= budget.
// Each (layer, head) keeps its own token set: heads evict independently.
//
// Slots [0, budget) are a (layer, head)'s own K/V rows; slots [budget,
// capacity), which only a chunk appended to a full head reaches, keep their
// rows in one spill area per KV head shared by all layers: the forward pass
// appends and evicts one layer at a time, and EvictOverBudget() moves the
// surviving spilled tokens into the slots its victims freed. So K/V memory
// is n_layer * budget + chunk rows per KV head, not n_layer * (budget +
// chunk): with a 20% budget and 64-token chunks that is 0.21x of a full
// cache instead of 0.23x.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/attention.h"
#include "kv/kv_policy.h"

namespace h2o {

struct KvCacheConfig {
  int32_t n_layer = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  int32_t budget = 0;                  // tokens kept per (layer, head) after eviction
  int32_t capacity = 0;                // slots per (layer, head): budget + largest chunk
  TensorType type = TensorType::kF16;  // K/V element type: kF32 or kF16
};

// Read-only view of one (layer, head)'s slots: what attention reads
// (kernels::KvSlots), with n_home = the budget.
using KvHeadView = kernels::KvSlots;

class KvCache {
 public:
  static constexpr int32_t kFreeSlot = -1;

  // Allocates all slots up front. Requires budget >= 1, capacity >= budget,
  // type kF32 or kF16. The policy is owned by the cache.
  KvCache(const KvCacheConfig& config, std::unique_ptr<EvictionPolicy> policy);

  const KvCacheConfig& config() const { return config_; }
  const EvictionPolicy& policy() const { return *policy_; }

  // Stores one token's K and V rows (head_dim floats each, RoPE already
  // applied) for (layer, head) in a free slot and returns the slot. Its
  // score starts at 0. Requires count(layer, head) < capacity, and no other
  // layer's tokens in the spill area (checked).
  int32_t Append(int32_t layer, int32_t head, int32_t pos, const float* k, const float* v);

  KvHeadView View(int32_t layer, int32_t head) const;

  // Accumulated attention per slot of (layer, head), [n_slots]; attention
  // adds to it. Allocated only when policy().needs_scores() (else nullptr).
  double* scores(int32_t layer, int32_t head);
  const double* scores(int32_t layer, int32_t head) const;
  // This step's attention per slot (what TOVA ranks by); attention
  // overwrites it. Allocated only when policy().needs_step_attention()
  // (else nullptr).
  float* step_attention(int32_t layer, int32_t head);

  int32_t count(int32_t layer, int32_t head) const;

  // Evicts, for every head of `layer`, the policy's victims until its count
  // is at most the budget, then moves the layer's spilled tokens (rows,
  // position, scores) into freed slots. Call after the layer's attention
  // for a chunk, before appending to another layer.
  void EvictOverBudget(int32_t layer);

  // Forgets every token (slots stay allocated).
  void Clear();

  // Makes this cache hold exactly what `other` holds (tokens, slots,
  // scores, the policy's state), so both evict alike from here on: lets a
  // caller save a prefix once and score several continuations of it.
  // Requires the same config and policy name. Allocates nothing.
  void CopyFrom(const KvCache& other);

  // Bytes allocated for K/V storage and per-slot metadata: a constant,
  // fixed at construction.
  size_t AllocatedBytes() const;
  // What AllocatedBytes() will be for a cache of this config and policy,
  // without allocating it (for estimates).
  static size_t AllocatedBytesFor(const KvCacheConfig& config, const EvictionPolicy& policy);
  // Bytes a never-evicting cache of the same element type would need to
  // hold n_tokens tokens (K and V only): what the budget saves against.
  static size_t FullCacheBytes(int32_t n_layer, int32_t n_head_kv, int32_t head_dim,
                               TensorType type, int64_t n_tokens);

 private:
  size_t HeadIndex(int32_t layer, int32_t head) const;
  size_t SlotIndex(int32_t layer, int32_t head, int32_t slot) const;
  void Evict(size_t head_index, int32_t slot);
  // The K (V) row of a slot: in the (layer, head)'s own rows below the
  // budget, in the head's spill area from there on.
  // Bytes left uninitialized, so the OS backs a page only when a row in it
  // is first written: a full cache for a long declared context (Llama 3's
  // 131072 tokens) costs memory as tokens arrive, not all at start-up. Only
  // written rows are ever read.
  class UninitializedRows {
   public:
    explicit UninitializedRows(size_t n) : data_(new uint8_t[n]) {}
    uint8_t& operator[](size_t i) { return data_[i]; }
    const uint8_t& operator[](size_t i) const { return data_[i]; }
    uint8_t* data() { return data_.get(); }
    const uint8_t* data() const { return data_.get(); }

   private:
    std::unique_ptr<uint8_t[]> data_;
  };

  uint8_t* RowIn(UninitializedRows& home, UninitializedRows& spill, int32_t layer, int32_t head,
                 int32_t slot);
  uint8_t* KRow(int32_t layer, int32_t head, int32_t slot);
  uint8_t* VRow(int32_t layer, int32_t head, int32_t slot);
  void MoveSpillHome(int32_t layer, int32_t head);

  KvCacheConfig config_;
  std::unique_ptr<EvictionPolicy> policy_;
  size_t row_bytes_;  // bytes of one head_dim row in `type`

  UninitializedRows k_;              // [n_layer][n_head_kv][budget][head_dim]
  UninitializedRows v_;              // [n_layer][n_head_kv][budget][head_dim]
  UninitializedRows k_spill_;        // [n_head_kv][capacity - budget][head_dim]
  UninitializedRows v_spill_;        // [n_head_kv][capacity - budget][head_dim]
  int32_t spill_layer_ = -1;         // the layer whose tokens are in the spill, or -1
  std::vector<int32_t> pos_;         // [n_layer][n_head_kv][capacity]
  std::vector<double> score_;        // [n_layer][n_head_kv][capacity]
  std::vector<float> step_attn_;     // [n_layer][n_head_kv][capacity]
  std::vector<int32_t> count_;       // [n_layer][n_head_kv]
  std::vector<int32_t> high_water_;  // [n_layer][n_head_kv]
  std::vector<int32_t> newest_pos_;  // [n_layer][n_head_kv]
  // Evicted slots awaiting reuse: a stack of `free_top_[h]` entries per head.
  std::vector<int32_t> free_slots_;  // [n_layer][n_head_kv][capacity]
  std::vector<int32_t> free_top_;    // [n_layer][n_head_kv]
};

}  // namespace h2o
