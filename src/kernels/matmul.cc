#include "kernels/matmul.h"

#include <algorithm>

#include "core/status.h"
#include "kernels/act_kinds.h"
#include "kernels/dispatch.h"
#include "kernels/matvec.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

// Float-path rows widened to f32 together (a multiple of the GEMM's row
// block; small enough to stay in L1/L2 for the whole batch).
constexpr int64_t kRowBlock = 8;

// Floats of scratch that hold n_tokens rows of cols activations quantized
// as Act (both block types are a whole number of floats).
template <typename Act>
int64_t ActScratchFloats(int64_t cols, int64_t n_tokens) {
  static_assert(sizeof(Act) % sizeof(float) == 0);
  return n_tokens * (cols / ActKind<Act>::kElems) *
         static_cast<int64_t>(sizeof(Act) / sizeof(float));
}

// Integer-dot types: the whole batch quantized into scratch (viewed as
// blocks: the caller's float buffer is only ever used as raw storage here),
// rows split over the pool like MatVec, each row dotted with every token.
template <typename Act>
void MatMulQuantized(const TypeKernels& tk, const KernelTable& table, const uint8_t* base,
                     size_t row_bytes, int64_t rows, int64_t cols, const float* x, int64_t n_tokens,
                     float* y, float* scratch, ThreadPool* pool) {
  H2O_CHECK(cols % ActKind<Act>::kElems == 0);
  const int64_t n_blocks = cols / ActKind<Act>::kElems;
  auto* xq = reinterpret_cast<Act*>(scratch);
  const auto quantize = ActKind<Act>::Quantize(table);
  for (int64_t t = 0; t < n_tokens; ++t) quantize(x + t * cols, xq + t * n_blocks, cols);
  const auto dot = ActKind<Act>::Dot(tk);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* wr = base + r * row_bytes;
      for (int64_t t = 0; t < n_tokens; ++t) y[t * rows + r] = dot(wr, xq + t * n_blocks, cols);
    }
  };
  if (pool == nullptr || pool->size() == 1) {
    run(0, rows);
  } else {
    pool->ParallelFor(rows, run);
  }
}

}  // namespace

int64_t MatMulScratchFloats(int64_t cols, int64_t n_tokens, int n_threads) {
  return std::max({std::max(1, n_threads) * kRowBlock * cols,
                   ActScratchFloats<BlockQ8Act>(cols, n_tokens),
                   ActScratchFloats<BlockQ8KAct>(cols, n_tokens)});
}

void MatMul(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
            int64_t n_tokens, float* y, float* scratch, ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && n_tokens >= 0);
  if (n_tokens == 1) {
    MatVec(type, w, rows, cols, x, y, pool);
    return;
  }
  const KernelTable& table = ActiveKernels();
  const TypeKernels& tk = table.For(type);
  const size_t row_bytes = RowBytes(type, cols);
  const auto* base = static_cast<const uint8_t*>(w);
  if (tk.dot_row_q8 != nullptr) {
    MatMulQuantized<BlockQ8Act>(tk, table, base, row_bytes, rows, cols, x, n_tokens, y, scratch,
                                pool);
    return;
  }
  if (tk.dot_row_q8k != nullptr) {
    MatMulQuantized<BlockQ8KAct>(tk, table, base, row_bytes, rows, cols, x, n_tokens, y, scratch,
                                 pool);
    return;
  }
  const GemmF32Fn gemm = table.gemm_f32;
  const int n_threads = pool != nullptr ? pool->size() : 1;
  // The rows are cut into one part per thread; part i owns scratch rows
  // [i * kRowBlock, (i + 1) * kRowBlock), where other types are widened to
  // f32 a block of rows at a time.
  auto run_part = [&](int64_t part) {
    const int64_t begin = rows * part / n_threads;
    const int64_t end = rows * (part + 1) / n_threads;
    if (type == TensorType::kF32) {
      gemm(reinterpret_cast<const float*>(base + begin * row_bytes), end - begin, x, n_tokens, cols,
           y + begin, rows);
      return;
    }
    float* block = scratch + part * kRowBlock * cols;
    for (int64_t r = begin; r < end; r += kRowBlock) {
      const int64_t n_rows = std::min(kRowBlock, end - r);
      for (int64_t i = 0; i < n_rows; ++i) {
        tk.dequantize_row(base + (r + i) * row_bytes, block + i * cols, cols);
      }
      gemm(block, n_rows, x, n_tokens, cols, y + r, rows);
    }
  };
  if (pool == nullptr || n_threads == 1) {
    run_part(0);
  } else {
    pool->ParallelFor(n_threads, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) run_part(part);
    });
  }
}

}  // namespace h2o::kernels
