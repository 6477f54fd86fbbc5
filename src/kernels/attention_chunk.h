// Causal attention of a chunk of consecutive queries (a prefill) for the
// query heads that share one KV head, tiled over blocks of queries so that
// each K and V row is loaded once per block rather than once per query,
// with the H2O score update taken from the same probabilities. The results
// equal those of AttendGroup called for each query in turn.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"

namespace h2o::kernels {

struct KernelTable;

struct ChunkAttentionOutputs {
  // Query t's n_group heads at out + t * out_stride ([n_group][head_dim]
  // each), overwritten.
  float* out = nullptr;
  int64_t out_stride = 0;
  // AttendGroupChunkScratchFloats(...) floats, caller-owned, not shared
  // with a concurrent call.
  float* scratch = nullptr;
  // [n_slots] or null: += for every query t in order, the sum over the
  // group of its probabilities (exactly AttendGroup's score update, query
  // after query).
  double* score_accum = nullptr;
  // [n_slots] or null: += the last query's probabilities summed over the
  // group (TOVA's ranking; zero it first for "the newest query alone").
  float* step_attention = nullptr;
};

// Floats of ChunkAttentionOutputs::scratch that suffice for every
// AttendGroupChunk call with n_queries <= max_queries and kv.n_slots <=
// max_slots (and this n_group and head_dim), so a forward sizes it once
// for its largest chunk and cache: a block of queries' q and outputs and
// their probabilities over the slots, at most max(64, n_group) * 2 *
// head_dim + max(2^17, n_group * max_slots) floats.
size_t AttendGroupChunkScratchFloats(int32_t max_queries, int32_t n_group, int32_t max_slots,
                                     int32_t head_dim);

// Query t in [0, n_queries) sits at position pos0 + t; its n_group query
// heads (RoPE applied) are q + t * q_stride, [n_group][head_dim]. Each
// query sees the slots AttendGroup's rule makes visible to it (positions
// in [0, pos0 + t], and within `window` of it when window > 0), so the
// chunk's own tokens, appended to the slots beforehand, give causality.
//
// Results: out, score_accum and step_attention are bit-identical (==) to
// calling AttendGroup(kernels, ...) for t = 0, 1, ..., n_queries - 1 with
// the same score_accum and step_attention only on the last call: the same
// row kernels compute the same dot products and softmax sums, and the
// weighted sums add the same products in the same slot order, plus exact
// zeros for the slots a query of its block does not see. Those zeros
// are exact only for finite V rows: an inf or NaN V in a slot visible to a
// later query of the block reaches the earlier ones' outputs too.
//
// Like AttendGroup, runs with denormals flushed to zero.
//
// Requires n_queries >= 1, n_group >= 1, window >= 0, at least one visible
// slot for every query (checked), scratch as sized above, and out rows not
// overlapping q. Thread-safe for distinct outputs and scratch.
void AttendGroupChunk(const float* q, int64_t q_stride, int32_t n_queries, int32_t n_group,
                      const KvSlots& kv, int32_t pos0, int32_t window, float scale,
                      const ChunkAttentionOutputs& outputs);

// The same on the backend `kernels` (the above uses ActiveKernels()).
void AttendGroupChunk(const KernelTable& kernels, const float* q, int64_t q_stride,
                      int32_t n_queries, int32_t n_group, const KvSlots& kv, int32_t pos0,
                      int32_t window, float scale, const ChunkAttentionOutputs& outputs);

}  // namespace h2o::kernels
