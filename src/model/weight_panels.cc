#include "model/weight_panels.h"

#include <algorithm>
#include <cstring>

#include "gguf/file.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace h2o {
namespace {

// Where each matrix's panels start in the arena: cache-line aligned, as
// the panels are read a line at a time.
constexpr size_t kAlign = 64;

}  // namespace

Result<WeightPanels> WeightPanels::Pack(ModelWeights& w, const gguf::File& file, int n_threads) {
  std::vector<WeightMatrix*> matrices;
  for (LayerWeights& l : w.layers) {
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      matrices.push_back(m);
    }
  }
  // A tied output is the token embedding: packed as one, looked up from
  // its panels (ForwardPass::Embed).
  matrices.push_back(w.tied_output ? &w.token_embd : &w.output);
  std::erase_if(matrices, [](const WeightMatrix* m) { return m->data == nullptr || m->panels; });
  auto bytes_of = [](const WeightMatrix& m) {
    return kernels::PanelsOffered(m.type) ? kernels::PanelsBytes(m.type, m.rows, m.cols)
                                          : static_cast<size_t>(m.rows) * m.row_bytes();
  };
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const WeightMatrix* m : matrices) {
    offsets.push_back(total);
    total += (bytes_of(*m) + kAlign - 1) / kAlign * kAlign;
  }
  WeightPanels out;
  if (total == 0) return out;
  // One arena in huge pages where the kernel gives them: a decode step
  // streams every matrix, and with 4 KiB pages each page costs a TLB miss
  // (on a 2-core VM, 32 tokens over 1 GB of q8_0 panels ran 24% faster
  // from huge pages, one token 8-12%; f16 rows 9% at 32 tokens).
  H2O_ASSIGN_OR_RETURN(out.arena_, HugePageBuffer::Allocate(total));
  std::unique_ptr<kernels::ThreadPool> pool;
  if (n_threads > 1) pool = std::make_unique<kernels::ThreadPool>(n_threads);
  for (size_t i = 0; i < matrices.size(); ++i) {
    WeightMatrix* m = matrices[i];
    uint8_t* to = out.arena_.data() + offsets[i];
    const size_t row_bytes = m->row_bytes();
    const auto* from = static_cast<const uint8_t*>(m->data);
    if (kernels::PanelsOffered(m->type)) {
      kernels::PackPanels(m->type, from, m->rows, m->cols, to, pool.get());
      m->panels = true;
    } else {
      // No panels for this type: its rows as stored.
      auto copy = [&](int64_t begin, int64_t end) {
        std::memcpy(to + begin * row_bytes, from + begin * row_bytes, (end - begin) * row_bytes);
      };
      if (pool != nullptr) {
        pool->ParallelFor(m->rows, copy);
      } else {
        copy(0, m->rows);
      }
    }
    file.ReleasePages(from, static_cast<size_t>(m->rows) * row_bytes);
    m->data = to;
  }
  out.matrices_ = matrices.size();
  if (w.tied_output) w.output = w.token_embd;
  return out;
}

}  // namespace h2o
