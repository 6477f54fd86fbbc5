// Threads claim chunks of whole panels of rows (ThreadPool::
// ParallelForClaimed), each starting on its own contiguous share; a chunk is
// swept once per block of tokens small enough to stay in L2 (the
// activations are re-read for every panel of rows, the weights once per
// token block). The tiles (GemmFn) do the register blocking.
#include "kernels/matmul.h"

#include <algorithm>
#include <span>

#include <unistd.h>

#include "core/status.h"
#include "kernels/act_kinds.h"
#include "kernels/dispatch.h"
#include "kernels/matvec.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"

namespace h2o::kernels {
namespace {

// Activation bytes a token block may span: 3/8 of this CPU's L2, so they
// stay there next to the panel of weights being swept over them. 768 KiB
// on a 2 MiB L2 (Sapphire Rapids); on Zen 5's 1 MiB L2 that fixed figure
// made f16 pp512 3-15% slower than 384 KiB (TinyLlama shape; 110M 2-4%;
// q8_0, whose activations are a quarter the bytes, the same).
int64_t TokenBlockBytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return (l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 20) * 3 / 8;
  }();
  return bytes;
}

constexpr int64_t kAlign = 64;

// Chunks of panels per thread in a product (see Product).
constexpr int64_t kChunksPerThread = 8;

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

// Quantizes rows [begin, end) of x into Act blocks at dst.
template <typename Act>
void QuantizeTokens(const KernelTable& table, const float* x, int64_t begin, int64_t end,
                    int64_t cols, void* dst) {
  H2O_CHECK(cols % ActKind<Act>::kElems == 0);
  auto* blocks = static_cast<Act*>(dst);
  const int64_t stride = cols / ActKind<Act>::kElems;
  const auto quantize = ActKind<Act>::Quantize(table);
  for (int64_t t = begin; t < end; ++t) quantize(x + t * cols, blocks + t * stride, cols);
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
// backend's panels, in one pass of the pool: each thread quantizes its
// share of the tokens (where the type's dot wants them quantized), then the
// threads claim chunks of whole panels (ThreadPool::ParallelForClaimed), so
// the products of a layer's input (Q, K, V; gate and up) cost one hand-off
// instead of one per product and one for the quantization. With `after`,
// a chunk is the same rows of every product, and after(rows) runs on them
// right away. Chunks start on a multiple of kPanelAlignRows rows, where a
// panel starts and where its bytes begin in both layouts.
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
  uint8_t* quantized = nullptr;
  if (format != ActFormat::kNone) {
    quantized = free_space;
    free_space += AlignUp(n_tokens * act_bytes);
  }
  const void* acts = quantized != nullptr ? static_cast<const void*>(quantized) : x;
  auto quantize = [&](int /*thread*/, int64_t begin, int64_t end) {
    if (format == ActFormat::kQ8) {
      QuantizeTokens<BlockQ8Act>(table, x, begin, end, cols, quantized);
    } else {
      QuantizeTokens<BlockQ8KAct>(table, x, begin, end, cols, quantized);
    }
  };
  const int64_t block = std::min(std::max<int64_t>(TokenBlockBytes() / act_bytes, 16), n_tokens);
  const int64_t per_thread = AlignUp(GemmScratchBytes(cols, n_tokens));
  const size_t row_bytes = RowBytes(type, cols);
  const int n_threads = pool != nullptr ? pool->size() : 1;

  // Rows [begin, end) of one product, by `thread`.
  auto multiply = [&](int thread, const SharedProduct& p, int64_t begin, int64_t end) {
    void* own = free_space + thread * per_thread;
    const auto* base = static_cast<const uint8_t*>(p.w);
    for (int64_t t = 0; t < n_tokens; t += block) {
      gemm(base + begin * row_bytes, row_bytes, end - begin,
           static_cast<const uint8_t*>(acts) + t * act_bytes, std::min(block, n_tokens - t), cols,
           p.y + t * p.y_stride + begin, p.y_stride, own);
    }
    if (p.bias == nullptr) return;
    for (int64_t t = 0; t < n_tokens; ++t) {
      float* y = p.y + t * p.y_stride;
      for (int64_t r = begin; r < end; ++r) y[r] += p.bias[r];
    }
  };
  // Chunks of whole panels, about kChunksPerThread per thread, so that the
  // last chunks taken even the threads out.
  int64_t panels = 0;
  for (const SharedProduct& p : products) {
    panels += (p.rows + kPanelAlignRows - 1) / kPanelAlignRows;
  }
  const int64_t grain =
      kPanelAlignRows * std::max<int64_t>(1, panels / (kChunksPerThread * n_threads));
  // Chunk c: with `after`, rows [c * grain, ...) of every product; without,
  // the chunks of each product in turn.
  int64_t first_chunk[kMaxSharedProducts + 1] = {0};
  H2O_CHECK(products.size() <= kMaxSharedProducts);
  for (size_t i = 0; i < products.size(); ++i) {
    first_chunk[i + 1] = first_chunk[i] + (products[i].rows + grain - 1) / grain;
  }
  const int64_t n_chunks = after != nullptr ? first_chunk[1] : first_chunk[products.size()];
  auto run = [&](int thread, int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      if (after != nullptr) {
        const int64_t first = c * grain, last = std::min(products[0].rows, first + grain);
        for (const SharedProduct& p : products) multiply(thread, p, first, last);
        (*after)(first, last);
        continue;
      }
      size_t i = 0;
      while (c >= first_chunk[i + 1]) ++i;
      const int64_t first = (c - first_chunk[i]) * grain;
      multiply(thread, products[i], first, std::min(products[i].rows, first + grain));
    }
  };
  const ThreadRangeFn prepare(quantize);
  // Waking the workers costs microseconds; a product this small is done
  // sooner by the caller alone (decode on a tiny model).
  int64_t total_rows = 0;
  for (const SharedProduct& p : products) total_rows += p.rows;
  if (pool == nullptr ||
      static_cast<size_t>(total_rows) * row_bytes * static_cast<size_t>(n_tokens) < kMinPoolBytes) {
    if (quantized != nullptr) quantize(0, 0, n_tokens);
    run(0, 0, n_chunks);
    return;
  }
  pool->ParallelForClaimed(n_chunks, 1, run, n_tokens, quantized != nullptr ? &prepare : nullptr);
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
  const TypeKernels& kernels = ActiveKernels().For(type);
  Product(type, panels ? kernels.gemm_panels : kernels.gemm, products, cols, x, n_tokens, scratch,
          pool, after);
}

}  // namespace h2o::kernels
