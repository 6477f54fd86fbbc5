// Hyperparameters of a decoder-only model, read from GGUF metadata under the
// keys of its architecture (model/arch.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "kernels/ops.h"
#include "model/arch.h"

namespace h2o {
namespace gguf {
class File;
}

enum class RopeScalingType { kNone, kLinear, kYarn };

struct HParams {
  std::string arch;                // general.architecture: "llama", "qwen2", ...
  const ArchSpec* spec = nullptr;  // FindArch(arch): static, never null once read
  int32_t n_vocab = 0;
  int32_t n_ctx_train = 0;  // {arch}.context_length
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;  // {arch}.attention.key_length, default n_embd / n_head
  int32_t n_ff = 0;
  int32_t n_rot = 0;       // rotated dims per head ({arch}.rope.dimension_count)
  float norm_eps = 1e-5f;  // attention.layer_norm_rms_epsilon, or layer_norm_epsilon
  // Per-token scale of the embeddings (Gemma: sqrt(n_embd)), of the
  // attention logits (1 / sqrt(head_dim) but for Gemma 3 27B), and the
  // final logits' soft cap cap * tanh(x / cap) (0: none).
  float embed_scale = 1.0f;
  float attn_scale = 0.0f;
  float final_logit_softcap = 0.0f;
  bool parallel_residual = false;  // GPT-NeoX: attention and FFN both read the layer input
  float rope_freq_base = 10000.0f;
  float rope_freq_base_swa = 10000.0f;  // the windowed layers' own base (Gemma 3)
  kernels::RopeMode rope_mode = kernels::RopeMode::kNormal;
  // Context extension ({arch}.rope.scaling.*), as llama.cpp reads it: a file
  // without a scaling type scales linearly by its factor (default 1).
  RopeScalingType rope_scaling = RopeScalingType::kLinear;
  float rope_freq_scale = 1.0f;   // 1 / rope.scaling.factor; 1 for kNone
  int32_t n_ctx_orig = 0;         // rope.scaling.original_context_length, default n_ctx_train
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor
  // YaRN's ramp: dims that turn more than beta_fast times over n_ctx_orig
  // keep their frequency, fewer than beta_slow times are scaled, linearly
  // mixed between.
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;

  // Per layer: 0 for attention over the whole sequence, W for a sliding
  // window (the query and the W - 1 positions before it: Gemma 3's local
  // layers). Empty: every layer is global.
  std::vector<int32_t> layer_window;

  int32_t n_group() const { return n_head / n_head_kv; }  // query heads per KV head
  int32_t window(int32_t layer) const { return layer_window.empty() ? 0 : layer_window[layer]; }
  int32_t kv_dim() const { return n_head_kv * head_dim; }
  int32_t q_dim() const { return n_head * head_dim; }
};

// Reads and validates the hyperparameters. Errors name the missing or bad
// key, or say that the architecture is not supported (and which are).
Result<HParams> ReadHParams(const gguf::File& file);

}  // namespace h2o
