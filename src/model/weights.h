// Model weights as views into the mmapped GGUF file (no copies), except
// the small norm vectors, which are converted to float at load.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor_type.h"
#include "model/hparams.h"

namespace h2o {
namespace gguf {
class File;
}

// A 2-D weight matrix [rows][cols] stored row-major in `type`: row r holds
// output r's input weights (GGUF dims = {cols, rows}).
struct WeightMatrix {
  TensorType type = TensorType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes() const { return RowBytes(type, cols); }
};

struct LayerWeights {
  std::vector<float> attn_norm;  // [n_embd]
  WeightMatrix wq;               // [n_head * head_dim][n_embd]
  WeightMatrix wk;               // [n_head_kv * head_dim][n_embd]
  WeightMatrix wv;               // [n_head_kv * head_dim][n_embd]
  WeightMatrix wo;               // [n_embd][n_head * head_dim]
  std::vector<float> ffn_norm;   // [n_embd]
  WeightMatrix w_gate;           // [n_ff][n_embd]
  WeightMatrix w_up;             // [n_ff][n_embd]
  WeightMatrix w_down;           // [n_embd][n_ff]
};

struct ModelWeights {
  WeightMatrix token_embd;  // [n_vocab][n_embd]
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;  // [n_embd]
  WeightMatrix output;             // [n_vocab][n_embd]; token_embd when tied
  bool tied_output = false;
  std::vector<float> rope_freqs;  // [n_rot / 2] Llama 3's frequency divisors; empty if absent
};

// Finds every tensor the architecture needs under its standard GGUF name and
// checks its shape against hp. Sets hp.n_vocab from token_embd. The views
// stay valid while `file` lives.
Result<ModelWeights> LoadWeights(const gguf::File& file, HParams& hp);

}  // namespace h2o
