#include "model/check_tensors.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "kernels/quant.h"

namespace h2o {

Status CheckTensorValues(const gguf::File& file) {
  std::vector<float> row;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (!IsRunnable(t.type)) continue;
    const int64_t cols = t.dims[0];
    const int64_t rows = t.n_elements() / cols;
    const size_t row_bytes = RowBytes(t.type, cols);
    row.resize(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      kernels::DequantizeRow(t.type, t.data + r * row_bytes, row.data(), cols);
      for (int64_t c = 0; c < cols; ++c) {
        if (!std::isfinite(row[c])) {
          return Status::Error(fmt::format("{}: tensor '{}' has a non-finite value ({}) at row {}, column {}",
                                           file.path(), t.name, row[c], r, c));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace h2o
