// Decode/prefill attention of the query heads that share one KV head, over
// that head's cache slots, with the H2O score update taken from the same
// probabilities. Runs of visible slots go to the backend's whole-run K and
// V kernels (KvRowKernels).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/tensor_type.h"

namespace h2o::kernels {

// One KV head's slots, as the cache stores them: the rows of slots [0,
// n_home) at k / v, those of [n_home, n_slots) at k_spill / v_spill (the
// cache's chunk area shared by its layers); KRow / VRow hide the split.
struct KvSlots {
  const void* k = nullptr;        // [n_home][head_dim] of k_type (f32 or f16)
  const void* v = nullptr;        // [n_home][head_dim] of v_type (f32 or f16)
  const void* k_spill = nullptr;  // [n_slots - n_home][head_dim] of k_type
  const void* v_spill = nullptr;  // [n_slots - n_home][head_dim] of v_type
  TensorType k_type = TensorType::kF32;
  TensorType v_type = TensorType::kF32;
  const int32_t* pos = nullptr;  // [n_slots]; < 0 marks an empty slot
  int32_t n_slots = 0;
  int32_t n_home = 0;
  int32_t head_dim = 0;

  const void* KRow(int32_t slot) const { return Row(k, k_spill, k_type, slot); }
  const void* VRow(int32_t slot) const { return Row(v, v_spill, v_type, slot); }

 private:
  const void* Row(const void* home, const void* spill, TensorType type, int32_t slot) const {
    const size_t row_bytes = RowBytes(type, head_dim);
    return slot < n_home ? static_cast<const uint8_t*>(home) + slot * row_bytes
                         : static_cast<const uint8_t*>(spill) + (slot - n_home) * row_bytes;
  }
};

struct GroupAttentionOutputs {
  float* out = nullptr;             // [n_group][head_dim], overwritten
  float* probs = nullptr;           // [n_group][n_slots] scratch
  double* score_accum = nullptr;    // [n_slots] or null: += sum over the group of probs
  float* step_attention = nullptr;  // [n_slots] or null: += sum over the group of probs
};

// Causal softmax attention of n_group queries (q: [n_group][head_dim], RoPE
// applied, all at position query_pos) over the visible slots: position p
// with 0 <= p <= query_pos and, when window > 0, query_pos - p < window
// (the query and the window - 1 positions before it: a sliding-window
// layer, llama.cpp's LLAMA_SWA_TYPE_STANDARD with n_swa = window; 0 for a
// global layer). Empty, future and out-of-window slots get probability 0
// and add nothing to score_accum or step_attention. Each run of visible
// slots is read once for the whole group (GQA). Runs with denormals
// flushed to zero (kernels/flush_denormals.h): a probability below 2^-126
// is exactly 0. Requires window >= 0 and at least one visible slot.
// Thread-safe for distinct outputs.
void AttendGroup(const float* q, int32_t n_group, const KvSlots& kv, int32_t query_pos,
                 int32_t window, float scale, const GroupAttentionOutputs& outputs);

struct KernelTable;
// The same on the backend `kernels` (ActiveKernels() above), so that tests
// can hold every backend to the same results.
void AttendGroup(const KernelTable& kernels, const float* q, int32_t n_group, const KvSlots& kv,
                 int32_t query_pos, int32_t window, float scale,
                 const GroupAttentionOutputs& outputs);

}  // namespace h2o::kernels
