// Matrix-vector product over a stored weight matrix: the decode hot path.
#pragma once

#include <cstdint>

#include "core/tensor_type.h"

namespace h2o::kernels {

class ThreadPool;

// y[r] = the dot of row r of w with x for r in [0, rows). The float types
// (f32, f16, bf16) compute it as MatMul's tiles do (the active table's
// gemm entry with one token), which equals DotRow(type, row r, x, cols)
// within float rounding: its bound, n * FLT_EPSILON * sum_i |w[i] x[i]|
// at most. For the quantized types x is quantized once (QuantizeActivation
// for HasDotRowQ8, QuantizeActivationK for HasDotRowQ8K) and y[r] =
// DotRowQ8 / DotRowQ8K(type, row r, those blocks, cols) exactly (llama.cpp's
// scheme: exact integer block sums, x's quantization error bounded as
// documented there). No heap allocation for
// cols <= 16384 (beyond: once per thread, a buffer that only grows). w is row-major
// with rows of RowBytes(type, cols) bytes (a GGUF tensor [rows][cols] as
// stored). cols must be a multiple of the block size (checked). Rows are
// split over `pool` (nullptr runs on the caller thread); each y[r] is
// computed by one thread in a fixed order, so the result is bit-identical
// for any thread count. y must not alias x or w.
void MatVec(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x, float* y,
            ThreadPool* pool);

}  // namespace h2o::kernels
