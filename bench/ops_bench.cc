// Single-thread speed of the per-vector operations of a transformer layer
// for every kernel backend this CPU runs, in elements per second: the norms
// (n_embd floats once or twice per layer and token), the gated and plain
// activations (n_ff floats) and the logit soft-cap (a vocabulary's worth).
// Sizes stay in L1/L2, so this is compute speed: at these rates the ops
// cost far less than the weight reads of the matrix products around them.
//
//   h2o_ops_bench [--benchmark_filter=gelu] [--benchmark_min_time=0.2]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/dispatch.h"

namespace h2o::kernels {
namespace {

// x (the input, restored before each call so in-place ops see the same
// values), a second operand y (weight or up), z (bias) and an output, all
// of n floats.
struct Operands {
  std::vector<float> x, y, z, out;
};

using Op = std::function<void(const KernelTable&, Operands&, int64_t)>;

void BM_Op(benchmark::State& state, const KernelTable* table, const Op* op, int64_t n) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  Operands v{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n),
             std::vector<float>(n)};
  for (std::vector<float>* a : {&v.x, &v.y, &v.z}) {
    for (float& f : *a) f = dist(rng);
  }
  const std::vector<float> input = v.x;
  // Timed by hand around the op alone: PauseTiming costs more than a
  // 2048-float norm, and without the restore repeated GELUs would drift
  // into subnormals, which x86 multiplies slowly.
  for (auto _ : state) {
    v.x = input;
    benchmark::ClobberMemory();
    const auto start = std::chrono::steady_clock::now();
    (*op)(*table, v, n);
    benchmark::DoNotOptimize(v.x.data());
    benchmark::DoNotOptimize(v.out.data());
    benchmark::ClobberMemory();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n);
}

}  // namespace
}  // namespace h2o::kernels

int main(int argc, char** argv) {
  using namespace h2o::kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  struct Named {
    const char* name;
    int64_t n;
    Op op;
  };
  static const std::vector<Named> ops = {
      {"rms_norm", 2048,
       [](const KernelTable& t, Operands& v, int64_t n) {
         t.rms_norm(v.x.data(), v.y.data(), v.out.data(), n, 1e-5f);
       }},
      {"layer_norm", 2048,
       [](const KernelTable& t, Operands& v, int64_t n) {
         t.layer_norm(v.x.data(), v.y.data(), v.z.data(), v.out.data(), n, 1e-5f);
       }},
      {"softmax", 2048,
       [](const KernelTable& t, Operands& v, int64_t n) { t.softmax(v.x.data(), n); }},
      {"swiglu", 8192,
       [](const KernelTable& t, Operands& v, int64_t n) { t.swiglu(v.x.data(), v.y.data(), n); }},
      {"geglu", 8192,
       [](const KernelTable& t, Operands& v, int64_t n) { t.geglu(v.x.data(), v.y.data(), n); }},
      {"gelu", 8192, [](const KernelTable& t, Operands& v, int64_t n) { t.gelu(v.x.data(), n); }},
      {"softcap", 32768,
       [](const KernelTable& t, Operands& v, int64_t n) { t.softcap(v.x.data(), n, 30.0f); }},
  };
  for (const Named& o : ops) {
    for (const KernelTable* table : AvailableKernels()) {
      const std::string name = std::string(o.name) + "/" + std::to_string(o.n) + "/" + table->name;
      benchmark::RegisterBenchmark(name.c_str(), BM_Op, table, &o.op, o.n)->UseManualTime();
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
