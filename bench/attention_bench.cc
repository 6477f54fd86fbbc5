// Single-thread cost of one KV head's decode attention (AttendGroup: scores
// over K, softmax, weighted sum over V, H2O score update) on the active
// backend, for f16 K/V as the cache stores them by default, per number of
// cached slots and query heads per KV head (1: MHA like the 110M shape; 8:
// TinyLlama's GQA). Reported as K+V bytes per second: at these sizes the
// slots sit in L2, so this is the kernel's compute speed, the part of a
// deep decode step that H2O's smaller budget shrinks.
//
//   h2o_attention_bench [--benchmark_filter=slots:2048]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"

namespace h2o::kernels {
namespace {

constexpr int32_t kHeadDim = 64;

void BM_AttendGroup(benchmark::State& state, TensorType kv_type, int32_t n_slots, int32_t n_group) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> values(kHeadDim);
  const size_t row_bytes = RowBytes(kv_type, kHeadDim);
  std::vector<uint8_t> k(row_bytes * n_slots), v(row_bytes * n_slots);
  for (int32_t s = 0; s < n_slots; ++s) {
    for (float& x : values) x = dist(rng);
    RefKernels().For(kv_type).quantize_row(values.data(), k.data() + s * row_bytes, kHeadDim);
    for (float& x : values) x = dist(rng);
    RefKernels().For(kv_type).quantize_row(values.data(), v.data() + s * row_bytes, kHeadDim);
  }
  std::vector<int32_t> pos(n_slots);
  for (int32_t s = 0; s < n_slots; ++s) pos[s] = s;
  std::vector<float> q(static_cast<size_t>(n_group) * kHeadDim);
  for (float& x : q) x = dist(rng);
  std::vector<float> out(q.size()), probs(static_cast<size_t>(n_group) * n_slots);
  std::vector<double> scores(n_slots);
  const KvSlots slots{.k = k.data(), .v = v.data(), .k_type = kv_type, .v_type = kv_type,
                      .pos = pos.data(), .n_slots = n_slots, .n_home = n_slots,
                      .head_dim = kHeadDim};
  GroupAttentionOutputs outputs;
  outputs.out = out.data();
  outputs.probs = probs.data();
  outputs.score_accum = scores.data();
  for (auto _ : state) {
    AttendGroup(q.data(), n_group, slots, n_slots - 1, /*window=*/0, 0.125f, outputs);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(k.size() + v.size()));
}

}  // namespace
}  // namespace h2o::kernels

int main(int argc, char** argv) {
  using namespace h2o;
  using namespace h2o::kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (TensorType type : {TensorType::kF16, TensorType::kF32}) {
    for (int32_t n_group : {1, 8}) {
      for (int32_t n_slots : {256, 2048}) {
        const std::string name = std::string("AttendGroup/") + std::string(TraitsOf(type).name) +
                                 "/group:" + std::to_string(n_group) +
                                 "/slots:" + std::to_string(n_slots);
        benchmark::RegisterBenchmark(name.c_str(), BM_AttendGroup, type, n_slots, n_group)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
