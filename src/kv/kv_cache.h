// KvCache: preallocated K/V slots per (layer, KV head), with the per-slot
// metadata (original position, accumulated attention score) that eviction
// policies read. Storage, metadata and the victim choice are kept apart:
// this class owns storage and metadata; an EvictionPolicy (kv_policy.h)
// picks victims; EvictOverBudget() applies the choice.
//
// Invariants, per (layer, head):
//   - between forward passes, slots [0, high_water) each hold a token and
//     count == high_water: eviction only ever brings a spilled head back
//     down to its budget, and the spilled survivors fill the slots it
//     freed, so the next Append always takes the high-water slot (nothing
//     is allocated after construction);
//   - count <= capacity, and after EvictOverBudget(), count <= budget
//     (the layer's: see below).
// Each (layer, head) keeps its own token set: heads evict independently.
//
// Sliding-window layers (Gemma 3's local layers) attend to the query and
// the W - 1 positions before it and never further back, so such a layer
// keeps exactly its last W positions whatever the policy: its budget is W
// (not the policy's: the window is the model's, not an approximation), it
// evicts the lowest position, and it tracks no scores. The policy governs
// the other ("global") layers alone. Layers therefore differ in budget, and
// each layer's rows are laid out with its own budget.
//
// Slots [0, budget) are a (layer, head)'s own K/V rows; slots [budget,
// capacity), which only a chunk appended to a full head reaches, keep their
// rows in one spill area per KV head shared by all layers: the forward pass
// appends and evicts one layer at a time, and EvictOverBudget() moves the
// surviving spilled tokens into the slots its victims freed. So K/V memory
// per KV head is the layers' budgets plus one chunk of rows, not n_layer *
// (budget + chunk): with a 20% budget and 64-token chunks that is 0.21x of a
// full cache instead of 0.23x.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/huge_pages.h"
#include "core/tensor_type.h"
#include "kernels/attention.h"
#include "kv/kv_cache_state.h"
#include "kv/kv_policy.h"
#include "kv/kv_types.h"

namespace h2o {

struct KvCacheConfig {
  int32_t n_layer = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  int32_t budget = 0;    // tokens kept per (global layer, head) after eviction
  int32_t capacity = 0;  // slots per (global layer, head): budget + largest chunk
  KvTypes types;         // K and V element types (kv_types.h)
  // Per layer (empty: every layer is global): 0 for a global layer, which
  // the policy governs with `budget` and `capacity`; W >= 1 for a
  // sliding-window layer, which keeps its W highest positions and has W +
  // window_chunk slots. A caller whose sequences never pass n_ctx tokens
  // may give min(W, n_ctx): it keeps the same tokens.
  std::vector<int32_t> layer_window;
  int32_t window_chunk = 0;  // slots of a sliding-window layer beyond W, for a chunk
  // Per layer (empty: every global layer keeps `budget`): a global layer's
  // own budget, >= 1, with the same capacity - budget slots beyond it for a
  // chunk (PyramidKV, kv/pyramid.h); ignored for sliding-window layers.
  std::vector<int32_t> layer_budgets;
  // Pinned tokens (--kv-keep, a request's n_keep): positions [0, n_keep)
  // stay in every global layer's heads whatever the policy says, counted in
  // `budget` and layer_budgets (the policy's own budget + n_keep), so the
  // policy sees and governs only the rest. They are the first tokens
  // appended, so they hold slots [0, n_keep) and never move. Sliding-window
  // layers keep their window alone.
  int32_t n_keep = 0;

  bool windowed(int32_t layer) const { return !layer_window.empty() && layer_window[layer] > 0; }
  bool any_windowed() const;
  int32_t layer_budget(int32_t layer) const {
    if (windowed(layer)) return layer_window[layer];
    return layer_budgets.empty() ? budget : layer_budgets[layer];
  }
  int32_t layer_capacity(int32_t layer) const {
    if (windowed(layer)) return layer_window[layer] + window_chunk;
    return layer_budgets.empty() ? capacity : layer_budgets[layer] + (capacity - budget);
  }
  // Spill rows per KV head: the most a layer's capacity exceeds its budget.
  int32_t spill_slots() const;
  // The most slots any layer has: what attention scratch must hold.
  int32_t max_capacity() const;

  bool operator==(const KvCacheConfig&) const = default;
};

// Read-only view of one (layer, head)'s slots: what attention reads
// (kernels::KvSlots), with n_home = the layer's budget.
using KvHeadView = kernels::KvSlots;

class KvCache {
 public:
  static constexpr int32_t kFreeSlot = -1;

  // Allocates all slots up front. Requires budget >= 1, capacity >= budget,
  // CheckKvTypes(types, head_dim) ok, layer_window empty or n_layer entries >= 0,
  // window_chunk >= 0. The policy is owned by the cache.
  KvCache(const KvCacheConfig& config, std::unique_ptr<EvictionPolicy> policy);

  const KvCacheConfig& config() const { return config_; }
  const EvictionPolicy& policy() const { return *policy_; }

  // Stores one token's K and V rows (head_dim floats each, RoPE already
  // applied), converted to the cache's types, for (layer, head) in a free
  // slot and returns the slot. Its score starts at 0. Requires
  // count(layer, head) < capacity, and no other layer's tokens in the head's
  // spill area (checked). Appends to different heads may run on different
  // threads.
  int32_t Append(int32_t layer, int32_t head, int32_t pos, const float* k, const float* v);

  // Hints into the cache the K and V rows the next Append to (layer, head)
  // will write, whose lines are otherwise fetched from memory by the write
  // itself: in a batched decode step every sequence's head appends one row
  // into lines nothing has touched since admission.
  void PrefetchNextAppend(int32_t layer, int32_t head);

  KvHeadView View(int32_t layer, int32_t head) const;

  // Accumulated attention per slot of (layer, head), [n_slots]; attention
  // adds to it. Allocated only when policy().needs_scores() and only for
  // global layers: nullptr otherwise, and then attention must not compute
  // scores for the head (a sliding-window layer never asks for them).
  double* scores(int32_t layer, int32_t head);
  const double* scores(int32_t layer, int32_t head) const;
  // This step's attention per slot (what TOVA ranks by); attention
  // overwrites it. Allocated only when policy().needs_step_attention(), for
  // global layers (else nullptr).
  float* step_attention(int32_t layer, int32_t head);

  int32_t count(int32_t layer, int32_t head) const;

  // What attention records for (layer, head) in a pass of n_queries
  // queries, as the policy asks (its needs_scores, needs_step_attention,
  // observation_window): the scores it adds to, from query first_scored
  // on, and the step attention the pass's last query adds to (nullptr:
  // not recorded). Clears what the pass rewrites: the step attention, and
  // with an observation window the scores. Call after the pass's Append,
  // before its attention. The model reads this, never the policy.
  struct HeadScoring {
    double* scores = nullptr;
    int32_t first_scored = 0;
    float* step_attention = nullptr;
  };
  HeadScoring BeginAttention(int32_t layer, int32_t head, int32_t n_queries);
  // Whether each head may evict (EvictHeadOverBudget) as soon as its own
  // attention is done, on any thread; otherwise the layer evicts after
  // every head's attention (EvictOverBudget).
  bool evicts_per_head() const { return !policy_->has_state(); }

  // Evicts, for every head of `layer`, the policy's victims until its count
  // is at most the budget (a sliding-window layer: every position below its
  // W highest, without asking the policy), then moves the layer's spilled
  // tokens (rows, position, scores) into freed slots. Call after the
  // layer's attention for a chunk, before appending to another layer.
  void EvictOverBudget(int32_t layer);
  // The same for one head, once that head's attention is done. Different
  // heads may evict on different threads when !policy().has_state();
  // otherwise heads must evict in order (EvictOverBudget), for victims
  // that do not depend on the thread count.
  void EvictHeadOverBudget(int32_t layer, int32_t head);

  // Forgets every token (slots stay allocated).
  void Clear();

  // Backs every K/V row with RAM now (core/resident_memory.h), where rows
  // otherwise get their pages on first write: for a cache whose memory was
  // reserved for it anyway (the scheduler's admission), so that no later
  // forward pass stalls on page faults. Requires an empty cache (before
  // the first Append, or after Clear; checked).
  void CommitRows();

  // Appends every token `from` holds (its K/V rows as stored, positions),
  // head by head in slot order, with scores starting at 0: a cache
  // compressed once (`from`, evicted to its budget) continues in this one,
  // whose budget holds it and what comes after without evicting (eval's
  // kvpress-style protocols). Requires the same n_layer, n_head_kv,
  // head_dim, types and windows, nothing spilled in `from` (between
  // passes), and room within each layer's budget here (all checked).
  void AppendKept(const KvCache& from);

  // Makes this cache hold exactly what `other` holds (tokens, slots,
  // scores, the policy's state), so both evict alike from here on: lets a
  // caller save a prefix once and score several continuations of it.
  // Requires the same config (windows included) and policy name. Allocates
  // nothing.
  void CopyFrom(const KvCache& other);

  // Copies what the cache holds into `state` (kv/kv_cache_state.h), whose
  // policy must be a policy of this one's kind (its state is overwritten).
  // Requires nothing spilled (between passes; checked).
  void SaveState(KvCacheState& state) const;
  // Whether LoadState may take `state`: the same heads, head size, types
  // and policy; each layer's budget the saver's (a policy that never
  // evicts: room for what it held); a sliding-window layer the saver's
  // window, or one that evicted nothing yet.
  bool CanLoadState(const KvCacheState& state) const;
  // Makes this cache hold what `state` holds, so that it evicts from here
  // on as the saver would have. Requires CanLoadState (checked).
  void LoadState(const KvCacheState& state);

  // Bytes of the K/V rows the cache holds now (count() tokens per head).
  size_t HeldBytes() const;
  // Bytes allocated for K/V storage and per-slot metadata: a constant,
  // fixed at construction.
  size_t AllocatedBytes() const;
  // What AllocatedBytes() will be for a cache of this config and policy,
  // without allocating it (for estimates).
  static size_t AllocatedBytesFor(const KvCacheConfig& config, const EvictionPolicy& policy);
  // The K/V row part of AllocatedBytesFor (the layers' budgets and the
  // spill area); the rest is per-slot bookkeeping (positions, the policy's
  // scores) and one spill's worth of freed-slot indices. kv/kv_report.h reports the two apart.
  static size_t RowBytesFor(const KvCacheConfig& config);
  // Bytes an exact cache of these element types needs to hold n_tokens
  // tokens (K and V only): what the budget saves against. Every global
  // layer holds all n_tokens; a sliding-window layer (layer_window as in
  // KvCacheConfig) holds min(n_tokens, W), all its attention ever reads.
  static size_t FullCacheBytes(int32_t n_layer, int32_t n_head_kv, int32_t head_dim,
                               const KvTypes& types, int64_t n_tokens,
                               std::span<const int32_t> layer_window = {});

 private:
  // Where each layer's data start in the arrays below, which hold layer
  // after layer: `row` in k_/v_ (budget rows per head), `slot` in the
  // per-slot metadata (capacity per head), `scored` in score_/step_attn_
  // (capacity per head, global layers only). Entry n_layer holds the totals.
  struct LayerStart {
    size_t row = 0, slot = 0, scored = 0;
  };
  static std::vector<LayerStart> Layout(const KvCacheConfig& config);
  static size_t BytesFor(const KvCacheConfig& config, const LayerStart& totals,
                         const EvictionPolicy& policy);

  size_t HeadIndex(int32_t layer, int32_t head) const;
  size_t SlotIndex(int32_t layer, int32_t head, int32_t slot) const;
  // Index into score_/step_attn_, for a global layer only.
  size_t ScoredIndex(int32_t layer, int32_t head, int32_t slot) const;
  HeadMetadata Metadata(int32_t layer, int32_t head);
  // Takes the next slot of (layer, head) for a token at `pos` (its rows
  // are the caller's to write) and does the slot's bookkeeping.
  int32_t TakeSlot(int32_t layer, int32_t head, int32_t pos);
  // The home slots one head's evictions freed, awaiting its spilled
  // survivors: a stack over the head's spill_slots entries of freed_home_,
  // alive for one EvictHeadOverBudget (a head evicts at most its spill's
  // size).
  struct FreedSlots {
    int32_t* slots;
    int32_t capacity;
    int32_t count = 0;
  };
  void Evict(int32_t layer, int32_t head, int32_t slot, FreedSlots& freed);
  void EvictBelowWindow(int32_t layer, int32_t head, FreedSlots& freed);
  // The K (V) row of a slot: in the (layer, head)'s own rows below the
  // budget, in the head's spill area from there on.
  // The four arrays of rows share one mapping (rows_), left unwritten, so
  // the OS backs a page only when a row in it is first written: a full
  // cache for a long declared context (Llama 3's 131072 tokens) costs
  // memory as tokens arrive, not all at start-up. Only written rows are
  // ever read.
  uint8_t* RowIn(uint8_t* home, uint8_t* spill, size_t row_bytes, int32_t layer, int32_t head,
                 int32_t slot);
  uint8_t* KRow(int32_t layer, int32_t head, int32_t slot);
  uint8_t* VRow(int32_t layer, int32_t head, int32_t slot);
  void MoveSpillHome(int32_t layer, int32_t head, FreedSlots& freed);

  KvCacheConfig config_;
  std::unique_ptr<EvictionPolicy> policy_;
  size_t k_row_bytes_;              // bytes of one head_dim row in types.k
  size_t v_row_bytes_;              // ... in types.v
  std::vector<LayerStart> layout_;  // [n_layer + 1]
  int32_t spill_slots_;             // config_.spill_slots()

  HugePageBuffer rows_;         // k_, v_, k_spill_ and v_spill_, one after another
  uint8_t* k_ = nullptr;        // per layer: [n_head_kv][layer budget][head_dim]
  uint8_t* v_ = nullptr;        // per layer: [n_head_kv][layer budget][head_dim]
  uint8_t* k_spill_ = nullptr;  // [n_head_kv][spill_slots][head_dim]
  uint8_t* v_spill_ = nullptr;  // [n_head_kv][spill_slots][head_dim]
  // Per KV head, the layer whose tokens are in its spill, or -1.
  std::vector<int32_t> spill_layer_;  // [n_head_kv]
  std::vector<int32_t> pos_;          // per layer: [n_head_kv][layer capacity]
  std::vector<double> score_;         // per global layer: [n_head_kv][capacity]
  std::vector<float> step_attn_;      // per global layer: [n_head_kv][capacity]
  std::vector<int32_t> count_;        // [n_layer][n_head_kv]
  std::vector<int32_t> high_water_;   // [n_layer][n_head_kv]
  std::vector<int32_t> newest_pos_;   // [n_layer][n_head_kv]
  std::vector<int32_t> freed_home_;   // [n_head_kv][spill_slots]: FreedSlots
};

}  // namespace h2o
