#include "kernels/matmul.h"

#include "core/status.h"
#include "kernels/dispatch.h"
#include "kernels/matvec.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {

void MatMul(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
            int64_t n_tokens, float* y, float* scratch, ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && n_tokens >= 0);
  if (n_tokens == 1) {
    MatVec(type, w, rows, cols, x, y, pool);
    return;
  }
  const TypeKernels& tk = ActiveKernels().For(type);
  const DotRowFn dot_f32 = ActiveKernels().f32.dot_row;
  const size_t row_bytes = RowBytes(type, cols);
  const auto* base = static_cast<const uint8_t*>(w);
  const int n_threads = pool != nullptr ? pool->size() : 1;
  // The rows are cut into one part per thread; part i owns scratch row i.
  auto run_part = [&](int64_t part) {
    float* row = scratch + part * cols;
    const int64_t begin = rows * part / n_threads;
    const int64_t end = rows * (part + 1) / n_threads;
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* wr = base + r * row_bytes;
      if (type == TensorType::kF32) {
        for (int64_t t = 0; t < n_tokens; ++t) {
          y[t * rows + r] = dot_f32(reinterpret_cast<const float*>(wr), x + t * cols, cols);
        }
      } else {
        tk.dequantize_row(wr, row, cols);
        for (int64_t t = 0; t < n_tokens; ++t) y[t * rows + r] = dot_f32(row, x + t * cols, cols);
      }
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
