#include "model/weight_panels.h"

#include <new>

#include "gguf/file.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace h2o {
namespace {

// Cache-line aligned, as the panels are read a line at a time.
constexpr std::align_val_t kAlign{64};

}  // namespace

void WeightPanels::Free::operator()(uint8_t* p) const { ::operator delete[](p, kAlign); }

WeightPanels WeightPanels::Pack(ModelWeights& w, const gguf::File& file, int n_threads) {
  std::vector<WeightMatrix*> matrices;
  for (LayerWeights& l : w.layers) {
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      matrices.push_back(m);
    }
  }
  // A tied output is the token embedding: packed as one, looked up from
  // its panels (ForwardPass::Embed).
  matrices.push_back(w.tied_output ? &w.token_embd : &w.output);
  WeightPanels out;
  std::unique_ptr<kernels::ThreadPool> pool;
  for (WeightMatrix* m : matrices) {
    if (m->data == nullptr || m->panels || !kernels::PanelsOffered(m->type)) continue;
    if (pool == nullptr && n_threads > 1) pool = std::make_unique<kernels::ThreadPool>(n_threads);
    const size_t bytes = kernels::PanelsBytes(m->type, m->rows, m->cols);
    std::unique_ptr<uint8_t[], Free> panels(new (kAlign) uint8_t[bytes]);
    kernels::PackPanels(m->type, m->data, m->rows, m->cols, panels.get(), pool.get());
    file.ReleasePages(m->data, static_cast<size_t>(m->rows) * m->row_bytes());
    m->data = panels.get();
    m->panels = true;
    out.buffers_.push_back(std::move(panels));
  }
  if (w.tied_output) w.output = w.token_embd;
  return out;
}

}  // namespace h2o
