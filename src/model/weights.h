// Model weights as views into the mmapped GGUF file (no copies), except
// the small norm and bias vectors, which are converted to float at load.
// Which tensors exist follows the architecture's spec (model/arch.h).
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
// output r's input weights (GGUF dims = {cols, rows}). data == nullptr: the
// model has no such matrix. panels: data holds the kernels' panels of the
// rows (kernels::PackPanels), not the rows themselves.
struct WeightMatrix {
  TensorType type = TensorType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  bool panels = false;
  size_t row_bytes() const { return RowBytes(type, cols); }
};

// A norm's scale and, for LayerNorm, its bias. Empty weight: no such norm.
struct NormWeights {
  std::vector<float> weight;
  std::vector<float> bias;
};

struct LayerWeights {
  NormWeights attn_norm;  // [n_embd]
  // Q, K and V as three matrices, or fused into wqkv (rows q, then k, then
  // v); their biases are split at load either way (empty: none).
  WeightMatrix wq;    // [q_dim][n_embd]
  WeightMatrix wk;    // [kv_dim][n_embd]
  WeightMatrix wv;    // [kv_dim][n_embd]
  WeightMatrix wqkv;  // [q_dim + 2 kv_dim][n_embd]
  std::vector<float> bq, bk, bv;
  std::vector<float> q_norm, k_norm;  // [head_dim] per-head RMSNorm (empty: none)
  WeightMatrix wo;                    // [n_embd][q_dim]
  std::vector<float> bo;
  NormWeights attn_post_norm;  // applied to the attention output (Gemma)
  NormWeights ffn_norm;        // [n_embd]
  WeightMatrix w_gate;         // [n_ff][n_embd]; absent without a gate or when fused
  WeightMatrix w_up;           // [n_ff][n_embd], or [2 n_ff] rows gate then up (fused)
  WeightMatrix w_down;         // [n_embd][n_ff]
  std::vector<float> b_gate, b_up, b_down;
  NormWeights ffn_post_norm;  // applied to the FFN output (Gemma)
};

struct ModelWeights {
  WeightMatrix token_embd;     // [n_vocab][n_embd]
  WeightMatrix position_embd;  // [n_ctx_train][n_embd] learned positions (GPT-2); else absent
  std::vector<LayerWeights> layers;
  NormWeights output_norm;  // [n_embd]
  WeightMatrix output;      // [n_vocab][n_embd]; token_embd when tied
  std::vector<float> output_bias;
  bool tied_output = false;
  // Frequency divisors per rotated pair ([n_rot / 2]; empty if absent):
  // Llama 3's, and Phi-3's for contexts beyond / within n_ctx_orig.
  std::vector<float> rope_freqs;
  std::vector<float> rope_factors_long;
  std::vector<float> rope_factors_short;
};

// Finds every tensor the architecture needs under its standard GGUF name and
// checks its shape against hp; optional tensors are loaded when present,
// tensors the architecture never has are ignored. Sets hp.n_vocab from
// token_embd. The views stay valid while `file` lives.
Result<ModelWeights> LoadWeights(const gguf::File& file, HParams& hp);

}  // namespace h2o
