// Weight matrices repacked once at load into the active kernels' panels
// (kernels::PackPanels), so that no product repacks them per call; the
// file's copy of each is then let go from memory (File::ReleasePages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/weights.h"

namespace h2o {
namespace gguf {
class File;
}

// Owns the repacked bytes; the matrices it packed point into them.
class WeightPanels {
 public:
  // Repacks each matrix of w the kernels offer panels for (its type has
  // them) and points it at its panels. The token embedding only when the
  // output is tied to it (its rows are then looked up from the panels);
  // otherwise it stays as stored, read a row at a time. n_threads pack at
  // once. w's views must point into `file`.
  static WeightPanels Pack(ModelWeights& w, const gguf::File& file, int n_threads);

  size_t matrices() const { return buffers_.size(); }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<uint8_t[], Free>> buffers_;
};

}  // namespace h2o
