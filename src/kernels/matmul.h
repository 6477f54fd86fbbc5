// Weight matrix times a batch of activation vectors (prefill / chunks).
#pragma once

#include <cstdint>

#include "core/tensor_type.h"

namespace h2o::kernels {

class ThreadPool;

// y[t][r] = dot(w row r, x[t]) for t in [0, n_tokens), r in [0, rows).
// w: [rows][cols] in `type`; x: [n_tokens][cols]; y: [n_tokens][rows].
// Each weight row is read from memory once for the whole batch (and a
// quantized row dequantized once), which is what makes prefill faster per
// token than decode. scratch: [pool threads][cols] floats. Rows are split
// over the pool (nullptr: the caller alone). Equal to n_tokens MatVec
// calls within float rounding.
void MatMul(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
            int64_t n_tokens, float* y, float* scratch, ThreadPool* pool);

}  // namespace h2o::kernels
