// Threads own contiguous row ranges; each sweeps its rows once per block of
// tokens small enough to stay in its L2 (the activations are re-read for
// every panel of rows, the weights once per token block). The tiles
// (GemmFn) do the register blocking.
#include "kernels/matmul.h"

#include <algorithm>

#include "core/status.h"
#include "kernels/act_kinds.h"
#include "kernels/dispatch.h"
#include "kernels/matvec.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

// Activation bytes a token block may span: well inside a 2 MiB L2, next to
// the panel of weights being swept over them.
constexpr int64_t kTokenBlockBytes = 768 * 1024;

constexpr int64_t kAlign = 64;

template <typename Act>
int64_t ActBytes(int64_t cols) {
  return cols / ActKind<Act>::kElems * static_cast<int64_t>(sizeof(Act));
}

// Bytes of one token's activations as `format` stores them.
int64_t ActBytes(ActFormat format, int64_t cols) {
  switch (format) {
    case ActFormat::kQ8:
      return ActBytes<BlockQ8Act>(cols);
    case ActFormat::kQ8K:
      return ActBytes<BlockQ8KAct>(cols);
    case ActFormat::kNone:
      break;
  }
  return cols * static_cast<int64_t>(sizeof(float));
}

int64_t AlignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

uint8_t* AlignUp(void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<uint8_t*>((address + kAlign - 1) / kAlign * kAlign);
}

// Quantizes n_tokens rows of x into Act blocks at dst, split over the pool.
template <typename Act>
void QuantizeBatch(const KernelTable& table, const float* x, int64_t n_tokens, int64_t cols,
                   uint8_t* dst, ThreadPool* pool) {
  H2O_CHECK(cols % ActKind<Act>::kElems == 0);
  auto* blocks = reinterpret_cast<Act*>(dst);
  const int64_t stride = cols / ActKind<Act>::kElems;
  const auto quantize = ActKind<Act>::Quantize(table);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) quantize(x + t * cols, blocks + t * stride, cols);
  };
  if (pool == nullptr || pool->size() == 1) {
    run(0, n_tokens);
  } else {
    pool->ParallelFor(n_tokens, run);
  }
}

}  // namespace

int64_t MatMulScratchFloats(int64_t cols, int64_t n_tokens, int n_threads) {
  const int64_t acts = std::max(ActBytes<BlockQ8Act>(cols), ActBytes<BlockQ8KAct>(cols));
  const int64_t per_thread = AlignUp(GemmScratchBytes(cols, n_tokens));
  const int64_t bytes = kAlign + AlignUp(n_tokens * acts) + std::max(1, n_threads) * per_thread;
  return (bytes + static_cast<int64_t>(sizeof(float)) - 1) / static_cast<int64_t>(sizeof(float));
}

namespace {

// MatMul by `gemm`, over rows as stored or the backend's panels: thread
// parts start on a multiple of kPanelAlignRows rows, which is where a panel
// starts and where its bytes begin in both layouts.
void Product(TensorType type, GemmFn gemm, const void* w, int64_t rows, int64_t cols,
             const float* x, int64_t n_tokens, float* y, float* scratch, ThreadPool* pool) {
  if (n_tokens == 0 || rows == 0) return;
  H2O_CHECK(cols % TraitsOf(type).block_size == 0);
  H2O_CHECK(gemm != nullptr);
  const KernelTable& table = ActiveKernels();
  const ActFormat format = ActivationFormat(type);
  const int64_t act_bytes = ActBytes(format, cols);
  uint8_t* free_space = AlignUp(scratch);
  const void* acts = x;
  if (format == ActFormat::kQ8) {
    QuantizeBatch<BlockQ8Act>(table, x, n_tokens, cols, free_space, pool);
  } else if (format == ActFormat::kQ8K) {
    QuantizeBatch<BlockQ8KAct>(table, x, n_tokens, cols, free_space, pool);
  }
  if (format != ActFormat::kNone) {
    acts = free_space;
    free_space += AlignUp(n_tokens * act_bytes);
  }
  const int64_t block = std::min(std::max<int64_t>(kTokenBlockBytes / act_bytes, 16), n_tokens);
  const int64_t per_thread = AlignUp(GemmScratchBytes(cols, n_tokens));
  const size_t row_bytes = RowBytes(type, cols);
  const auto* base = static_cast<const uint8_t*>(w);
  const int n_threads = pool != nullptr ? pool->size() : 1;
  auto run_part = [&](int64_t part) {
    auto start = [&](int64_t i) {
      return i == n_threads ? rows : rows * i / n_threads / kPanelAlignRows * kPanelAlignRows;
    };
    const int64_t begin = start(part);
    const int64_t end = start(part + 1);
    if (begin >= end) return;
    void* own = free_space + part * per_thread;
    for (int64_t t = 0; t < n_tokens; t += block) {
      gemm(base + begin * row_bytes, row_bytes, end - begin,
           static_cast<const uint8_t*>(acts) + t * act_bytes, std::min(block, n_tokens - t), cols,
           y + t * rows + begin, rows, own);
    }
  };
  if (n_threads == 1) {
    run_part(0);
  } else {
    pool->ParallelFor(n_threads, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) run_part(part);
    });
  }
}

}  // namespace

void MatMul(TensorType type, const void* w, int64_t rows, int64_t cols, const float* x,
            int64_t n_tokens, float* y, float* scratch, ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && n_tokens >= 0);
  if (n_tokens == 1) {
    MatVec(type, w, rows, cols, x, y, pool);
    return;
  }
  Product(type, ActiveKernels().For(type).gemm, w, rows, cols, x, n_tokens, y, scratch, pool);
}

bool PanelsOffered(TensorType type) {
  return IsRunnable(type) && ActiveKernels().For(type).pack_panels != nullptr;
}

size_t PanelsBytes(TensorType type, int64_t rows, int64_t cols) {
  const int64_t padded = (rows + kPanelAlignRows - 1) / kPanelAlignRows * kPanelAlignRows;
  return static_cast<size_t>(padded) * RowBytes(type, cols);
}

void PackPanels(TensorType type, const void* w, int64_t rows, int64_t cols, void* out,
                ThreadPool* pool) {
  H2O_CHECK(PanelsOffered(type) && rows >= 0 && cols % TraitsOf(type).block_size == 0);
  const PackPanelsFn pack = ActiveKernels().For(type).pack_panels;
  const size_t row_bytes = RowBytes(type, cols);
  const int64_t n_chunks = (rows + kPanelAlignRows - 1) / kPanelAlignRows;
  // Chunks of kPanelAlignRows rows start a panel and take exactly their
  // rows' bytes, so each packs on its own.
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t first = c * kPanelAlignRows;
      const size_t offset = static_cast<size_t>(first) * row_bytes;
      pack(static_cast<const uint8_t*>(w) + offset, row_bytes,
           std::min(kPanelAlignRows, rows - first), cols, static_cast<uint8_t*>(out) + offset);
    }
  };
  if (pool == nullptr) {
    run(0, n_chunks);
  } else {
    pool->ParallelFor(n_chunks, run);
  }
}

void MatMulPanels(TensorType type, const void* panels, int64_t rows, int64_t cols, const float* x,
                  int64_t n_tokens, float* y, float* scratch, ThreadPool* pool) {
  H2O_CHECK(rows >= 0 && cols >= 0 && n_tokens >= 0);
  Product(type, ActiveKernels().For(type).gemm_panels, panels, rows, cols, x, n_tokens, y,
          scratch, pool);
}

}  // namespace h2o::kernels
