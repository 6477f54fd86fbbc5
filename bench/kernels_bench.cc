// Single-thread MatVec throughput of every kernel backend this CPU runs,
// per weight type: y = W x for a 2048 x 2048 matrix, one DotRow per row
// (what MatVec does on one thread; the quantized types quantize x once per
// product and use their integer dot, dot_row_q8 or dot_row_q8k, as MatVec
// does), reported as weight bytes read per second. DotRowQ8_4096 is that
// integer dot on one row that stays in cache. The matrix is 16 MiB in f32 and 2.1 MiB in q4_0, so
// the small types run from cache and show compute speed, the large ones approach memory bandwidth.
// DotRow4096 repeats one 4096-element row that stays in L1/L2: the kernel's compute speed alone.
// MatVecPool runs the public MatVec (active backend) over a ThreadPool of 1 and 2 threads on a 768
// x 2048 matrix (a 110M model's FFN shape): the per-call wake-up cost of the pool shows as the gap
// between the two, and ParallelForRoundTrip times one call with empty work. MatMul2048/TYPE/N:n is
// the public MatMul (active backend) of a 2048 x 2048 matrix with n tokens on one thread, in
// GFLOP/s: n = 1 is decode, 8-64 batched decode and prefill chunks, 512 a whole prompt.
//
//   h2o_kernels_bench [--benchmark_filter=q8_0] [--benchmark_min_time=0.2]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/tensor_type.h"
#include "kernels/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/matvec.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

constexpr int64_t kRows = 2048;
constexpr int64_t kCols = 2048;

struct Matrix {
  TensorType type;
  std::vector<uint8_t> data;  // [kRows][RowBytes(type, kCols)]
};

Matrix MakeMatrix(TensorType type) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> row(kCols);
  const size_t row_bytes = RowBytes(type, kCols);
  Matrix m{type, std::vector<uint8_t>(row_bytes * kRows)};
  for (int64_t r = 0; r < kRows; ++r) {
    for (float& v : row) v = dist(rng);
    RefKernels().For(type).quantize_row(row.data(), m.data.data() + r * row_bytes, kCols);
  }
  return m;
}

void BM_MatVec(benchmark::State& state, const KernelTable* table, const Matrix* m) {
  std::vector<float> x(kCols, 0.5f);
  std::vector<float> y(kRows);
  const TypeKernels& tk = table->For(m->type);
  const size_t row_bytes = RowBytes(m->type, kCols);
  std::vector<BlockQ8Act> xq(kCols / 32);
  std::vector<BlockQ8KAct> xqk(kCols / 256);
  for (auto _ : state) {
    if (tk.dot_row_q8 != nullptr) {
      table->quantize_act(x.data(), xq.data(), kCols);
      for (int64_t r = 0; r < kRows; ++r) {
        y[r] = tk.dot_row_q8(m->data.data() + r * row_bytes, xq.data(), kCols);
      }
    } else if (tk.dot_row_q8k != nullptr) {
      table->quantize_act_k(x.data(), xqk.data(), kCols);
      for (int64_t r = 0; r < kRows; ++r) {
        y[r] = tk.dot_row_q8k(m->data.data() + r * row_bytes, xqk.data(), kCols);
      }
    } else {
      for (int64_t r = 0; r < kRows; ++r) {
        y[r] = tk.dot_row(m->data.data() + r * row_bytes, x.data(), kCols);
      }
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(m->data.size()));
}

void BM_MatVecPool(benchmark::State& state, TensorType type, int threads) {
  constexpr int64_t kPoolRows = 768;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(kCols), x(kCols), y(kPoolRows);
  for (float& v : x) v = dist(rng);
  const size_t row_bytes = RowBytes(type, kCols);
  std::vector<uint8_t> w(row_bytes * kPoolRows);
  for (int64_t r = 0; r < kPoolRows; ++r) {
    for (float& v : values) v = dist(rng);
    RefKernels().For(type).quantize_row(values.data(), w.data() + r * row_bytes, kCols);
  }
  ThreadPool pool(threads);
  for (auto _ : state) {
    MatVec(type, w.data(), kPoolRows, kCols, x.data(), y.data(), &pool);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(w.size()));
}

// One ParallelFor over 2 empty ranges per iteration: the pool's hand-off
// and completion latency alone (caller and workers idle in between).
void BM_ParallelForRoundTrip(benchmark::State& state, int threads) {
  ThreadPool pool(threads);
  int64_t sink = 0;
  for (auto _ : state) {
    pool.ParallelFor(threads,
                     [&](int64_t begin, int64_t end) { benchmark::DoNotOptimize(begin + end); });
    benchmark::DoNotOptimize(sink);
  }
}

// MatMul of a 2048 x 2048 matrix with n_tokens tokens on one thread (the
// active backend: H2O_KERNELS picks another), in GFLOP/s (2 per weight and
// token).
void BM_MatMul(benchmark::State& state, TensorType type, int64_t kTokens, int64_t kRows,
               bool panels) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(kCols), x(kTokens * kCols), y(kTokens * kRows);
  for (float& v : x) v = dist(rng);
  const size_t row_bytes = RowBytes(type, kCols);
  std::vector<uint8_t> w(row_bytes * kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    for (float& v : values) v = dist(rng);
    RefKernels().For(type).quantize_row(values.data(), w.data() + r * row_bytes, kCols);
  }
  std::vector<float> scratch(MatMulScratchFloats(kCols, kTokens, 1));
  std::vector<uint8_t> packed;
  if (panels) {
    packed.resize(PanelsBytes(type, kRows, kCols));
    PackPanels(type, w.data(), kRows, kCols, packed.data(), nullptr);
  }
  for (auto _ : state) {
    if (panels) {
      MatMulPanels(type, packed.data(), kRows, kCols, x.data(), kTokens, y.data(), scratch.data(),
                   nullptr);
    } else {
      MatMul(type, w.data(), kRows, kCols, x.data(), kTokens, y.data(), scratch.data(), nullptr);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2e-9 * static_cast<double>(state.iterations()) * kRows * kCols * kTokens,
                         benchmark::Counter::kIsRate);
}

// One seeded random row of kDotN values stored as `type`, and an x.
constexpr int64_t kDotN = 4096;
struct DotInputs {
  std::vector<uint8_t> row;
  std::vector<float> x;
};

DotInputs MakeDotInputs(TensorType type) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(kDotN);
  DotInputs in{std::vector<uint8_t>(RowBytes(type, kDotN)), std::vector<float>(kDotN)};
  for (float& v : values) v = dist(rng);
  for (float& v : in.x) v = dist(rng);
  RefKernels().For(type).quantize_row(values.data(), in.row.data(), kDotN);
  return in;
}

void BM_DotRow(benchmark::State& state, const KernelTable* table, TensorType type) {
  constexpr int64_t kN = kDotN;
  const DotInputs in = MakeDotInputs(type);
  const std::vector<uint8_t>& row = in.row;
  const std::vector<float>& x = in.x;
  const DotRowFn dot = table->For(type).dot_row;
  for (auto _ : state) {
    float y = dot(row.data(), x.data(), kN);
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(row.size()));
}

// The integer dot of one 4096-element row that stays in L1/L2 against a
// quantized activation: the quantized types' decode kernel alone, without
// memory traffic.
void BM_DotRowQ8(benchmark::State& state, const KernelTable* table, TensorType type) {
  constexpr int64_t kN = kDotN;
  const DotInputs in = MakeDotInputs(type);
  const std::vector<uint8_t>& row = in.row;
  const std::vector<float>& x = in.x;
  const TypeKernels& tk = table->For(type);
  std::vector<BlockQ8Act> xq(kN / 32);
  std::vector<BlockQ8KAct> xqk(kN / 256);
  table->quantize_act(x.data(), xq.data(), kN);
  table->quantize_act_k(x.data(), xqk.data(), kN);
  for (auto _ : state) {
    const float y = tk.dot_row_q8 != nullptr ? tk.dot_row_q8(row.data(), xq.data(), kN)
                                             : tk.dot_row_q8k(row.data(), xqk.data(), kN);
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(row.size()));
}

}  // namespace
}  // namespace h2o::kernels

int main(int argc, char** argv) {
  using namespace h2o;
  using namespace h2o::kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static std::vector<Matrix> matrices;
  for (TensorType type : RunnableTypes()) matrices.push_back(MakeMatrix(type));
  for (const Matrix& m : matrices) {
    for (const KernelTable* table : AvailableKernels()) {
      const std::string name =
          std::string("MatVec2048/") + std::string(TraitsOf(m.type).name) + "/" + table->name;
      benchmark::RegisterBenchmark(name.c_str(), BM_MatVec, table, &m)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (const Matrix& m : matrices) {
    for (const KernelTable* table : AvailableKernels()) {
      const std::string name =
          std::string("DotRow4096/") + std::string(TraitsOf(m.type).name) + "/" + table->name;
      benchmark::RegisterBenchmark(name.c_str(), BM_DotRow, table, m.type);
    }
  }
  for (const Matrix& m : matrices) {
    if (TraitsOf(m.type).block_size == 1) continue;
    for (const KernelTable* table : AvailableKernels()) {
      const std::string name =
          std::string("DotRowQ8_4096/") + std::string(TraitsOf(m.type).name) + "/" + table->name;
      benchmark::RegisterBenchmark(name.c_str(), BM_DotRowQ8, table, m.type);
    }
  }
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0, TensorType::kQ4_0,
                          TensorType::kQ4_K, TensorType::kQ6_K}) {
    for (int threads : {1, 2}) {
      const std::string name = std::string("MatVecPool768x2048/") +
                               std::string(TraitsOf(type).name) +
                               "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_MatVecPool, type, threads)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  for (TensorType type : RunnableTypes()) {
    for (int64_t n : {1, 4, 8, 19, 32, 64, 512}) {
      const std::string name =
          std::string("MatMul2048/") + std::string(TraitsOf(type).name) + "/N:" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(), BM_MatMul, type, n, kRows, false)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  }
  // The weights as repacked at load (README: --no-repack), where offered.
  for (TensorType type : RunnableTypes()) {
    if (!PanelsOffered(type)) continue;
    for (int64_t n : {1, 32, 512}) {
      const std::string name = std::string("MatMul2048Panels/") + std::string(TraitsOf(type).name) +
                               "/N:" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(), BM_MatMul, type, n, kRows, true)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.2);
    }
  }
  for (int64_t n : {1, 4, 19, 64}) {
    const std::string name = "MatMulTall/q8_0/N:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), BM_MatMul, TensorType::kQ8_0, n, int64_t{131072},
                                 false)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
  }
  benchmark::RegisterBenchmark("ParallelForRoundTrip/threads:2", BM_ParallelForRoundTrip, 2)
      ->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
