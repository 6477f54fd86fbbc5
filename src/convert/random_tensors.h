// Seeded random tensors for `h2o mkmodel`. Every row comes from its own
// std::mt19937_64 seeded from (seed, tensor name, row index): the values are
// fixed by the C++ standard, rows can be generated in any order and on any
// thread, and no tensor has to exist in memory before the writer asks for
// it. Values use integer arithmetic plus one double multiply, so they are
// the same on every standard library and compiler (no
// std::normal_distribution, no libm).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/tensor_type.h"
#include "gguf/writer.h"
#include "kernels/thread_pool.h"

namespace h2o {

// Fills row[0..n) with approximately normal values of mean `mean` and
// standard deviation `std` (Irwin-Hall with 4 terms, bounded by 2 sqrt(3)
// std), a pure function of row_seed.
void NormalRow(uint64_t row_seed, float mean, float std, float* row, int64_t n);

// The seed of tensor `name`'s rows for the file seed.
uint64_t TensorSeed(uint64_t seed, const std::string& name);

// Adds `name` ({cols, rows}: rows of `cols` elements, std `std`, stored as
// `type`) whose rows are drawn when the writer asks for the data.
Status AddRandomMatrix(gguf::Writer& w, kernels::ThreadPool& pool, uint64_t seed,
                       const std::string& name, TensorType type, int64_t cols, int64_t rows,
                       float std);

// Adds an f32 vector of n values with mean `mean` and std `std` (std 0:
// every value is `mean`, e.g. norm weights of 1).
Status AddRandomVector(gguf::Writer& w, uint64_t seed, const std::string& name, int64_t n,
                       float mean, float std);

}  // namespace h2o
