// Single-thread cost of one KV head's attention on the active backend, for
// f16 K/V as the cache stores them by default (f32 and q8_0 too), per query heads per
// KV head (1: MHA like the 110M shape; 8: TinyLlama's GQA):
//  - Decode/*: one query (AttendGroup: scores over K, softmax, weighted sum
//    over V, H2O score update) per number of cached slots, as K+V bytes per
//    second: at these sizes the slots sit in L2, so this is the kernel's
//    compute speed, the part of a deep decode step that H2O's smaller
//    budget shrinks.
//  - Prefill/*: a 512-token chunk appended after `depth` cached tokens,
//    attended causally, query by query (AttendGroup, what the forward did)
//    or in query blocks (AttendGroupChunk); FLOP/s counts the 4 * head_dim
//    flops of each visible (query head, slot) pair, so the two read as a
//    speedup. The /sharp case has logits spread over about +-100, whose
//    smallest probabilities are denormal floats (see flush_denormals.h).
//
//   h2o_attention_bench [--benchmark_filter=Prefill]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/attention.h"
#include "kernels/attention_chunk.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {
namespace {

// n_slots K and V rows of random values at positions 0..n_slots-1 in slot
// order (a cache filled by appending), and n_queries queries of n_group heads.
struct Inputs {
  int32_t head_dim, n_group;
  std::vector<uint8_t> k, v;
  std::vector<int32_t> pos;
  std::vector<float> q;
  KvSlots slots;

  Inputs(TensorType type, int32_t n_slots, int32_t n_queries, int32_t n_group_, int32_t head_dim_,
         float q_scale = 1.0f)
      : head_dim(head_dim_), n_group(n_group_) {
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> values(head_dim);
    const size_t row_bytes = RowBytes(type, head_dim);
    for (auto* rows : {&k, &v}) {
      rows->resize(row_bytes * n_slots);
      for (int32_t s = 0; s < n_slots; ++s) {
        for (float& x : values) x = dist(rng);
        RefKernels().For(type).quantize_row(values.data(), rows->data() + s * row_bytes, head_dim);
      }
    }
    pos.resize(n_slots);
    for (int32_t s = 0; s < n_slots; ++s) pos[s] = s;
    q.resize(static_cast<size_t>(n_queries) * n_group * head_dim);
    for (float& x : q) x = dist(rng) * q_scale;
    slots = {.k = k.data(),
             .v = v.data(),
             .k_type = type,
             .v_type = type,
             .pos = pos.data(),
             .n_slots = n_slots,
             .n_home = n_slots,
             .head_dim = head_dim};
  }
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }
};

void BM_Decode(benchmark::State& state, TensorType type, int32_t n_slots, int32_t n_group) {
  const Inputs in(type, n_slots, 1, n_group, 64);
  std::vector<float> out(in.q.size()), probs(static_cast<size_t>(n_group) * n_slots);
  std::vector<double> scores(n_slots);
  GroupAttentionOutputs outputs{out.data(), probs.data(), scores.data()};
  for (auto _ : state) {
    AttendGroup(in.q.data(), n_group, in.slots, n_slots - 1, /*window=*/0, 0.125f, outputs);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(in.k.size() + in.v.size()));
}

constexpr int32_t kChunk = 512;

void SetPrefillFlops(benchmark::State& state, const Inputs& in, int32_t depth) {
  // Query t sees depth + t + 1 slots.
  const double pairs =
      (static_cast<double>(depth) * kChunk + kChunk * (kChunk + 1) / 2.0) * in.n_group;
  state.counters["FLOP/s"] =
      benchmark::Counter(pairs * 4 * in.head_dim * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_PrefillPerQuery(benchmark::State& state, int32_t depth, int32_t n_group, int32_t d,
                        float q_scale) {
  const Inputs in(TensorType::kF16, depth + kChunk, kChunk, n_group, d, q_scale);
  const size_t group_floats = static_cast<size_t>(n_group) * d;
  std::vector<float> out(in.q.size()), probs(static_cast<size_t>(n_group) * in.slots.n_slots);
  std::vector<double> scores(in.slots.n_slots);
  for (auto _ : state) {
    for (int32_t t = 0; t < kChunk; ++t) {
      AttendGroup(&in.q[t * group_floats], n_group, in.slots, depth + t, /*window=*/0, in.scale(),
                  {&out[t * group_floats], probs.data(), scores.data()});
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetPrefillFlops(state, in, depth);
}

void BM_PrefillChunk(benchmark::State& state, int32_t depth, int32_t n_group, int32_t d,
                     float q_scale) {
  const Inputs in(TensorType::kF16, depth + kChunk, kChunk, n_group, d, q_scale);
  const int64_t group_floats = int64_t{n_group} * d;
  std::vector<float> out(in.q.size());
  std::vector<float> scratch(AttendGroupChunkScratchFloats(kChunk, n_group, in.slots.n_slots, d));
  std::vector<double> scores(in.slots.n_slots);
  const ChunkAttentionOutputs outputs{.out = out.data(),
                                      .out_stride = group_floats,
                                      .scratch = scratch.data(),
                                      .score_accum = scores.data()};
  for (auto _ : state) {
    AttendGroupChunk(in.q.data(), group_floats, kChunk, n_group, in.slots, depth, /*window=*/0,
                     in.scale(), outputs);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetPrefillFlops(state, in, depth);
}

}  // namespace
}  // namespace h2o::kernels

int main(int argc, char** argv) {
  using namespace h2o;
  using namespace h2o::kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (TensorType type : {TensorType::kF16, TensorType::kF32, TensorType::kQ8_0}) {
    for (int32_t n_group : {1, 8}) {
      for (int32_t n_slots : {40, 256, 2048}) {
        const std::string name = std::string("Decode/") + std::string(TraitsOf(type).name) +
                                 "/group:" + std::to_string(n_group) +
                                 "/slots:" + std::to_string(n_slots);
        benchmark::RegisterBenchmark(name.c_str(), BM_Decode, type, n_slots, n_group)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  auto prefill = [](int32_t depth, int32_t n_group, int32_t d, float q_scale, const char* tag) {
    const std::string shape = "/f16/depth:" + std::to_string(depth) +
                              "/group:" + std::to_string(n_group) + "/d:" + std::to_string(d) + tag;
    benchmark::RegisterBenchmark(("Prefill/PerQuery" + shape).c_str(), BM_PrefillPerQuery, depth,
                                 n_group, d, q_scale)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("Prefill/Chunk" + shape).c_str(), BM_PrefillChunk, depth, n_group,
                                 d, q_scale)
        ->Unit(benchmark::kMillisecond);
  };
  for (int32_t depth : {0, 1536}) {
    for (int32_t n_group : {1, 8}) {
      for (int32_t d : {64, 128}) prefill(depth, n_group, d, 1.0f, "");
    }
  }
  // Logits spread over about +-100 (queries 16x larger): probabilities in
  // the denormal range, as a trained model's peaked attention gives them.
  prefill(0, 1, 64, 16.0f, "/sharp");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
