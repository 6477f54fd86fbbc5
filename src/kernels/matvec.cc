// Float-dot weights (f32, f16, bf16) run the table's GEMM tile with one
// token, several rows at a time (see gemm_tile_float.h). Weights
// with an integer dot (every quantized type; ActivationFormat) first
// quantize x once per call into BlockQ8Act or BlockQ8KAct blocks, on the
// caller, then every row is an integer dot with those blocks; the blocks live on the caller's stack
// up to kStackCols columns (no heap traffic per token), in a thread-local buffer that only grows
// beyond that. Workers only read them, and ParallelFor returns after all workers are done, so the
// stack buffer outlives them.
#include "kernels/matvec.h"

#include <algorithm>
#include <vector>

#include "core/status.h"
#include "kernels/act_kinds.h"
#include "kernels/dispatch.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

constexpr int64_t kStackCols = 16384;

template <typename Run>
void RunRows(int64_t rows, size_t row_bytes, ThreadPool* pool, Run& run) {
  if (pool == nullptr || pool->size() == 1 || rows * row_bytes < kMinPoolBytes) {
    run(0, rows);
    return;
  }
  // Claimed in chunks of whole 8-row groups (the float tile's decode step),
  // about eight per thread: with equal shares, a thread the VM slowed held
  // the other up (TinyLlama f16 decode 16% faster, alternating in one run).
  const int64_t grain = std::max<int64_t>(1, rows / (8 * pool->size()) / 8) * 8;
  auto chunk = [&](int /*thread*/, int64_t begin, int64_t end) { run(begin, end); };
  pool->ParallelForClaimed(rows, grain, chunk);
}

// The integer-dot path for activation blocks of type Act.
template <typename Act>
void MatVecQuantized(const KernelTable& table, const TypeKernels& tk, const uint8_t* base,
                     size_t row_bytes, int64_t rows, int64_t cols, const float* x, float* y,
                     ThreadPool* pool) {
  constexpr int64_t kElems = ActKind<Act>::kElems;
  H2O_CHECK(cols % kElems == 0);
  Act stack_blocks[kStackCols / kElems];
  Act* xq = stack_blocks;
  if (cols > kStackCols) {
    thread_local std::vector<Act> wide;
    if (wide.size() < static_cast<size_t>(cols / kElems))
      wide.resize(static_cast<size_t>(cols / kElems));
    xq = wide.data();
  }
  ActKind<Act>::Quantize(table)(x, xq, cols);
  const auto dot = ActKind<Act>::Dot(tk);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) y[r] = dot(base + r * row_bytes, xq, cols);
  };
  RunRows(rows, row_bytes, pool, run);
}

}  // namespace

void MatVec(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x, float* y,
            ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && cols % TraitsOf(type).block_size == 0);
  const KernelTable& table = ActiveKernels();
  const TypeKernels& tk = table.For(type);
  const size_t row_bytes = RowBytes(type, cols);
  const auto* base = static_cast<const uint8_t*>(w);
  if (tk.dot_row_q8 != nullptr) {
    MatVecQuantized<BlockQ8Act>(table, tk, base, row_bytes, rows, cols, x, y, pool);
  } else if (tk.dot_row_q8k != nullptr) {
    MatVecQuantized<BlockQ8KAct>(table, tk, base, row_bytes, rows, cols, x, y, pool);
  } else {
    // MatMul's tile with one token: the same order of operations per row as
    // a batch, so MatMul equals MatVec here too.
    const GemmFn gemm = tk.gemm;
    auto run = [&](int64_t begin, int64_t end) {
      gemm(base + begin * row_bytes, row_bytes, end - begin, x, 1, cols, y + begin, 1, nullptr);
    };
    RunRows(rows, row_bytes, pool, run);
  }
}

}  // namespace h2o::kernels
