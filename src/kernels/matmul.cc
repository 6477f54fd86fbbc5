// Threads own contiguous row ranges; each sweeps its rows once per block of
// tokens small enough to stay in its L2 (the activations are re-read for
// every panel of rows, the weights once per token block). The tiles
// (GemmFn) do the register blocking.
#include "kernels/matmul.h"

#include <algorithm>
#include <span>

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

// Products by `gemm` of one activation batch, over rows as stored or the
// backend's panels: the batch is quantized once, and thread i takes the
// i-th share of every product's rows in one pass of the pool, so the
// products of a layer's input (Q, K, V; gate and up) cost one hand-off
// instead of one each. Shares start on a multiple of kPanelAlignRows rows,
// which is where a panel starts and where its bytes begin in both layouts.
void Product(TensorType type, GemmFn gemm, std::span<const SharedProduct> products, int64_t cols,
             const float* x, int64_t n_tokens, float* scratch, ThreadPool* pool,
             const RangeFn* after) {
  if (n_tokens == 0 || products.empty()) return;
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
  const int n_threads = pool != nullptr ? pool->size() : 1;
  auto share = [n_threads](int64_t rows, int64_t i) {
    return i == n_threads ? rows : rows * i / n_threads / kPanelAlignRows * kPanelAlignRows;
  };
  auto run_part = [&](int64_t part) {
    void* own = free_space + part * per_thread;
    for (const SharedProduct& p : products) {
      const int64_t begin = share(p.rows, part);
      const int64_t end = share(p.rows, part + 1);
      if (begin >= end) continue;
      const auto* base = static_cast<const uint8_t*>(p.w);
      for (int64_t t = 0; t < n_tokens; t += block) {
        gemm(base + begin * row_bytes, row_bytes, end - begin,
             static_cast<const uint8_t*>(acts) + t * act_bytes, std::min(block, n_tokens - t), cols,
             p.y + t * p.y_stride + begin, p.y_stride, own);
      }
      if (p.bias == nullptr) continue;
      for (int64_t t = 0; t < n_tokens; ++t) {
        float* y = p.y + t * p.y_stride;
        for (int64_t r = begin; r < end; ++r) y[r] += p.bias[r];
      }
    }
    if (after != nullptr) {
      const int64_t begin = share(products[0].rows, part);
      const int64_t end = share(products[0].rows, part + 1);
      if (begin < end) (*after)(begin, end);
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

void Product(TensorType type, GemmFn gemm, const void* w, int64_t rows, int64_t cols,
             const float* x, int64_t n_tokens, float* y, float* scratch, ThreadPool* pool) {
  const SharedProduct product{w, rows, y, rows, nullptr};
  Product(type, gemm, {&product, 1}, cols, x, n_tokens, scratch, pool, nullptr);
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

void UnpackPanelRow(TensorType type, const void* panels, int64_t row, int64_t cols, void* out) {
  H2O_CHECK(PanelsOffered(type) && row >= 0 && cols % TraitsOf(type).block_size == 0);
  ActiveKernels().For(type).unpack_panel_row(panels, RowBytes(type, cols), row, cols, out);
}

bool RowsSplitAt(bool panels, int64_t first) { return !panels || first % kPanelAlignRows == 0; }

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
  Product(type, ActiveKernels().For(type).gemm_panels, panels, rows, cols, x, n_tokens, y, scratch,
          pool);
}

void MatMulShared(TensorType type, bool panels, std::span<const SharedProduct> products,
                  int64_t cols, const float* x, int64_t n_tokens, float* scratch, ThreadPool* pool,
                  const RangeFn* after) {
  H2O_CHECK(cols >= 0 && n_tokens >= 0);
  for (const SharedProduct& p : products) {
    H2O_CHECK(p.rows >= 0 && p.y_stride >= p.rows);
    H2O_CHECK(after == nullptr || p.rows == products[0].rows);
  }
  if (n_tokens == 1 && !panels) {
    // One token over rows as stored: MatVec per product, as MatMul does.
    for (const SharedProduct& p : products) {
      MatVec(type, p.w, p.rows, cols, x, p.y, pool);
      for (int64_t r = 0; p.bias != nullptr && r < p.rows; ++r) p.y[r] += p.bias[r];
    }
    if (after != nullptr && !products.empty() && products[0].rows > 0) {
      (*after)(0, products[0].rows);
    }
    return;
  }
  const TypeKernels& kernels = ActiveKernels().For(type);
  Product(type, panels ? kernels.gemm_panels : kernels.gemm, products, cols, x, n_tokens, scratch,
          pool, after);
}

}  // namespace h2o::kernels
