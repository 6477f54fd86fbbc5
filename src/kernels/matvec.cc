#include "kernels/matvec.h"

#include "core/status.h"
#include "kernels/dispatch.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {

void MatVec(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x, float* y,
            ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && cols % TraitsOf(type).block_size == 0);
  const DotRowFn dot = ActiveKernels().For(type).dot_row;
  const size_t row_bytes = RowBytes(type, cols);
  const auto* base = static_cast<const uint8_t*>(w);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) y[r] = dot(base + r * row_bytes, x, cols);
  };
  // Waking the workers costs microseconds; a matrix this small is done sooner
  // by the caller alone.
  constexpr size_t kMinParallelBytes = 64 * 1024;
  if (pool == nullptr || pool->size() == 1 || rows * row_bytes < kMinParallelBytes) {
    run(0, rows);
  } else {
    pool->ParallelFor(rows, run);
  }
}

}  // namespace h2o::kernels
