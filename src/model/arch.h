// Architectures as data: what one forward pass needs to know about a GGUF
// architecture (norms, activation, positions, fused tensors, extra norms)
// and which of the standard tensors it has. Adding an architecture is a row
// in arch.cc plus tests; the forward has no per-model branch.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace h2o {

enum class NormKind {
  kRms,    // x / rms(x) * w
  kLayer,  // (x - mean) / std(x) * w + b
};

enum class FfnKind {
  kSwiGlu,  // down(silu(gate x) * up x)
  kGeGlu,   // down(gelu(gate x) * up x)
  kGelu,    // down(gelu(up x + b) + b), no gate
};

enum class PositionKind {
  kRopeNormal,  // rotary, pairs (2i, 2i+1): llama (its GGUFs store Q/K permuted for it)
  kRopeNeox,    // rotary, pairs (i, i + n_rot/2)
  kLearned,     // position_embd rows added to the token embeddings
};

// The tensors of a layer or of the model that an architecture may have.
// Names are llama.cpp's (one scheme for every architecture).
enum class TensorRole {
  kTokenEmbd,         // token_embd.weight
  kPositionEmbd,      // position_embd.weight
  kOutputNorm,        // output_norm.weight (+ .bias with LayerNorm)
  kOutput,            // output.weight: when absent, token_embd is reused
  kOutputBias,        // output.bias
  kRopeFreqs,         // rope_freqs.weight (Llama 3)
  kRopeFactorsLong,   // rope_factors_long.weight (Phi-3 long context)
  kRopeFactorsShort,  // rope_factors_short.weight
  kAttnNorm,          // blk.N.attn_norm.weight (+ .bias)
  kAttnQkv,           // blk.N.attn_q/k/v.weight, or the fused blk.N.attn_qkv.weight
  kAttnQkvBias,       // their .bias
  kAttnQkNorm,        // blk.N.attn_q_norm.weight, attn_k_norm.weight ([head_dim])
  kAttnOutput,        // blk.N.attn_output.weight
  kAttnOutputBias,    // blk.N.attn_output.bias
  kAttnPostNorm,      // blk.N.post_attention_norm.weight
  kFfnNorm,           // blk.N.ffn_norm.weight (+ .bias)
  kFfnUpDown,         // blk.N.ffn_up.weight, ffn_down.weight (+ ffn_gate.weight when gated)
  kFfnBias,           // blk.N.ffn_up.bias, ffn_down.bias
  kFfnPostNorm,       // blk.N.post_ffw_norm.weight
};

enum class Need { kRequired, kOptional };

struct TensorNeed {
  TensorRole role;
  Need need;
};

struct ArchSpec {
  std::string_view name;  // general.architecture
  NormKind norm;
  FfnKind ffn;
  PositionKind positions;
  bool fused_qkv = false;      // attn_qkv: rows q, then k, then v
  bool fused_gate_up = false;  // ffn_up: rows gate, then up (Phi-3)
  // Gemma: embeddings times sqrt(n_embd); every 6th layer global when the
  // file sets attention.sliding_window, the others windowed with their own
  // rope base (rope.freq_base_swa, default 10000).
  bool embed_scale = false;
  int32_t swa_pattern = 0;
  // GPT-NeoX: {arch}.use_parallel_residual (required) says whether the FFN
  // reads the layer input rather than the attention's sum.
  bool parallel_residual_key = false;
  // Tensors beyond token_embd, output_norm, attn_norm, attn_output, ffn_norm
  // and the matrices of attention and the FFN, which every architecture has.
  std::span<const TensorNeed> tensors;

  // Whether the architecture may or must have `role`; nullopt: never.
  std::optional<Need> Needs(TensorRole role) const;
  bool rotary() const { return positions != PositionKind::kLearned; }
};

// The spec of general.architecture `name`, or nullptr.
const ArchSpec* FindArch(std::string_view name);
// "llama, qwen2, ..." for messages and --help.
std::string ArchNames();

}  // namespace h2o
