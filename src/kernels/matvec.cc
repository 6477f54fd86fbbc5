// Float-dot weights (f32, f16, bf16) dot each row with x directly. Weights
// with an integer dot (q8_0, q4_0; HasDotRowQ8) first quantize x once per
// call into BlockQ8Act blocks, on the caller, then every row is an integer
// dot with those blocks; the blocks live on the caller's stack up to
// kStackCols columns (no heap traffic per token), in a thread-local buffer
// that only grows beyond that. Workers only read them, and ParallelFor
// returns after all workers are done, so the stack buffer outlives them.
#include "kernels/matvec.h"

#include <vector>

#include "core/status.h"
#include "kernels/dispatch.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

constexpr int64_t kStackCols = 16384;

// Waking the workers costs microseconds; a matrix this small is done sooner
// by the caller alone.
constexpr size_t kMinParallelBytes = 64 * 1024;

template <typename Run>
void RunRows(int64_t rows, size_t row_bytes, ThreadPool* pool, Run& run) {
  if (pool == nullptr || pool->size() == 1 || rows * row_bytes < kMinParallelBytes) {
    run(0, rows);
  } else {
    pool->ParallelFor(rows, run);
  }
}

}  // namespace

void MatVec(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x, float* y,
            ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && cols % TraitsOf(type).block_size == 0);
  const KernelTable& table = ActiveKernels();
  const TypeKernels& tk = table.For(type);
  const size_t row_bytes = RowBytes(type, cols);
  const auto* base = static_cast<const uint8_t*>(w);
  if (tk.dot_row_q8 == nullptr) {
    const DotRowFn dot = tk.dot_row;
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) y[r] = dot(base + r * row_bytes, x, cols);
    };
    RunRows(rows, row_bytes, pool, run);
    return;
  }
  BlockQ8Act stack_blocks[kStackCols / 32];
  BlockQ8Act* xq = stack_blocks;
  if (cols > kStackCols) {
    thread_local std::vector<BlockQ8Act> wide;
    if (wide.size() < static_cast<size_t>(cols / 32)) wide.resize(static_cast<size_t>(cols / 32));
    xq = wide.data();
  }
  table.quantize_act(x, xq, cols);
  const DotRowQ8Fn dot = tk.dot_row_q8;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) y[r] = dot(base + r * row_bytes, xq, cols);
  };
  RunRows(rows, row_bytes, pool, run);
}

}  // namespace h2o::kernels
