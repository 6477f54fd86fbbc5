// AVX2 GemmFn entries of the float types (the tile of gemm_tile_float.h on
// 256-bit registers) and the tables' GEMM entries. Compiled with AVX2+FMA
// flags only; dispatch.cc installs them after a CPUID check, under the
// linkage rules of simd_avx2.cc.
#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2_common.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_tile_float.h"
#include "kernels/simd.h"

namespace h2o::kernels::avx2 {
namespace {

struct Avx2 {
  using V = __m256;
  static constexpr int64_t kLanes = 8;
  // 3 x 4 accumulators + 3 weight vectors + 1 activation: all 16 registers.
  static constexpr int kRM = 3;
  static constexpr int kRN = 4;
  static constexpr int kDecodeRows = 8;
  static V Zero() { return _mm256_setzero_ps(); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V LoadX(const float* p) { return _mm256_loadu_ps(p); }
  static V LoadXTail(const float* p, int64_t n) { return LoadTail(p, n); }

  // The tree (ReduceInEights) starts from the eight lanes as they are.
  static __m256 Eight(V a) { return a; }
};

// n < 8 halves through a zero-padded copy (no masked 16-bit loads in AVX2).
__m128i LoadHalves(const uint16_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
__m128i LoadHalvesTail(const uint16_t* p, int64_t n) {
  uint16_t buf[8] = {};
  std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(uint16_t));
  return LoadHalves(buf);
}
__m256 WidenBF16(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

struct F32Weights {
  using Elem = float;
  static __m256 Load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 LoadTail(const float* p, int64_t n) { return avx2::LoadTail(p, n); }
};
struct F16Weights {
  using Elem = uint16_t;
  static __m256 Load(const uint16_t* p) { return _mm256_cvtph_ps(LoadHalves(p)); }
  static __m256 LoadTail(const uint16_t* p, int64_t n) {
    return _mm256_cvtph_ps(LoadHalvesTail(p, n));
  }
};
struct BF16Weights {
  using Elem = uint16_t;
  static __m256 Load(const uint16_t* p) { return WidenBF16(LoadHalves(p)); }
  static __m256 LoadTail(const uint16_t* p, int64_t n) { return WidenBF16(LoadHalvesTail(p, n)); }
};

// CPUID leaf 7, subleaf 1, EAX bit 4; the YMM state is already known to be
// enabled (the AVX2 table runs).
bool CpuHasAvxVnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0 && (eax & (1u << 4)) != 0;
}

}  // namespace

void DotLoop(TensorType type, const void* w, size_t row_bytes, int64_t n_rows, const void* x,
             int64_t n_tokens, int64_t cols, float* y, int64_t ldy) {
  const TypeKernels& tk = Avx2Kernels().For(type);
  const auto* rows = static_cast<const uint8_t*>(w);
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (tk.dot_rows_q8 != nullptr) {
      tk.dot_rows_q8(rows, row_bytes, n_rows, static_cast<const BlockQ8Act*>(x) + t * (cols / 32),
                     cols, y + t * ldy);
      continue;
    }
    for (int64_t r = 0; r < n_rows; ++r) {
      const uint8_t* row = rows + r * row_bytes;
      y[t * ldy + r] =
          tk.dot_row_q8 != nullptr
              ? tk.dot_row_q8(row, static_cast<const BlockQ8Act*>(x) + t * (cols / 32), cols)
              : tk.dot_row_q8k(row, static_cast<const BlockQ8KAct*>(x) + t * (cols / 256), cols);
    }
  }
}

void GemmF32(const float* w, int64_t n_rows, const float* x, int64_t n_tokens, int64_t cols,
             float* y, int64_t ldy) {
  FloatTile<Avx2, F32Weights>(w, static_cast<size_t>(cols) * sizeof(float), n_rows, x, n_tokens,
                              cols, y, ldy, nullptr);
}

KernelTable WithGemmTiles(KernelTable t) {
  t.f32.gemm = FloatTile<Avx2, F32Weights>;
  t.f16.gemm = FloatTile<Avx2, F16Weights>;
  t.bf16.gemm = FloatTile<Avx2, BF16Weights>;
  for (TypeKernels* k : {&t.f32, &t.f16, &t.bf16}) k->gemm_kind = "AVX2 FMA tile";
  SetKQuantTiles(t);
  if (CpuHasAvxVnni()) {
    SetVnniTiles(t);
  } else {
    SetMaddubsTiles(t);
  }
  return t;
}

}  // namespace h2o::kernels::avx2
