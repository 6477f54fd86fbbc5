// The weight matrices products read, moved once at load into one arena in
// huge pages: repacked into the active kernels' panels where the kernels
// offer them (kernels::PackPanels), so that no product repacks them per
// call, else copied as stored. The file's copy of each is then let go from
// memory (File::ReleasePages).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/huge_pages.h"
#include "core/status.h"
#include "model/weights.h"

namespace h2o {
namespace gguf {
class File;
}

// Owns the repacked bytes, one arena in huge pages where the kernel gives
// them (core/huge_pages.h); the matrices it packed point into it.
class WeightPanels {
 public:
  // Repacks each matrix of w the kernels offer panels for (its type has
  // them), copies the others, and points each at its new bytes. The token
  // embedding only when the output is tied to it (its rows are then looked
  // up from the arena); otherwise it stays in the file, read a row at a
  // time. n_threads pack at once. w's views must point into `file`.
  // Errors: no memory for the panels (w is then unchanged).
  static Result<WeightPanels> Pack(ModelWeights& w, const gguf::File& file, int n_threads);

  size_t matrices() const { return matrices_; }

 private:
  HugePageBuffer arena_;  // every matrix's panels, one after another
  size_t matrices_ = 0;
};

}  // namespace h2o
