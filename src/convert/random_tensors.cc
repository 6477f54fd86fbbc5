#include "convert/random_tensors.h"

#include <random>
#include <vector>

#include "kernels/quant.h"

namespace h2o {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

uint64_t RowSeed(uint64_t tensor_seed, int64_t row) {
  return SplitMix64(tensor_seed + static_cast<uint64_t>(row));
}

}  // namespace

void NormalRow(uint64_t row_seed, float mean, float std, float* row, int64_t n) {
  std::mt19937_64 rng(row_seed);
  // Each 64-bit draw is split into four 16-bit uniforms whose sum is
  // centred and scaled to unit variance: var of a uniform on 0..65535 is
  // (65536^2 - 1) / 12; of the sum, 4x that.
  const double scale = static_cast<double>(std) * 1.7320508075688772 / 65536.0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t u = rng();
    const int64_t sum = static_cast<int64_t>((u & 0xFFFF) + ((u >> 16) & 0xFFFF) +
                                             ((u >> 32) & 0xFFFF) + (u >> 48));
    const float x = static_cast<float>(static_cast<double>(sum - 131070) * scale);  // mean 131070
    row[i] = mean == 0.0f ? x : mean + x;
  }
}

uint64_t TensorSeed(uint64_t seed, const std::string& name) {
  return SplitMix64(seed ^ SplitMix64(Fnv1a64(name)));
}

Status AddRandomMatrix(gguf::Writer& w, kernels::ThreadPool& pool, uint64_t seed,
                       const std::string& name, TensorType type, int64_t cols, int64_t rows,
                       float std) {
  const uint64_t tensor_seed = TensorSeed(seed, name);
  const size_t row_bytes = RowBytes(type, cols);
  return w.AddTensorLazy(name, type, {cols, rows}, [=, &pool](void* dst) {
    pool.ParallelFor(rows, [&](int64_t begin, int64_t end) {
      std::vector<float> row(cols);
      for (int64_t r = begin; r < end; ++r) {
        NormalRow(RowSeed(tensor_seed, r), 0.0f, std, row.data(), cols);
        kernels::QuantizeRow(type, row.data(), static_cast<uint8_t*>(dst) + r * row_bytes, cols);
      }
    });
  });
}

Status AddRandomVector(gguf::Writer& w, uint64_t seed, const std::string& name, int64_t n,
                       float mean, float std) {
  std::vector<float> values(n, mean);
  if (std > 0.0f) NormalRow(RowSeed(TensorSeed(seed, name), 0), mean, std, values.data(), n);
  return w.AddTensor(name, TensorType::kF32, {n}, values.data(), values.size() * sizeof(float));
}

}  // namespace h2o
