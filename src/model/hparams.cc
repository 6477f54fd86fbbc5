#include "model/hparams.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "gguf/file.h"

namespace h2o {
namespace {

// Reads {arch}.rope.scaling.*: type (none, linear, yarn; default linear, as
// llama.cpp), factor (or the older rope.scale_linear), the context the
// factor extends and llama.cpp's extra attention factor. YaRN's ramp keeps
// llama.cpp's defaults: it reads no beta keys for these architectures.
Status ReadRopeScaling(const gguf::File& file, const std::string& p, HParams& hp) {
  std::string type = "linear";
  if (file.Find(p + "rope.scaling.type") != nullptr) {
    H2O_ASSIGN_OR_RETURN(type, file.GetString(p + "rope.scaling.type"));
  }
  if (type == "none") {
    hp.rope_scaling = RopeScalingType::kNone;
  } else if (type == "linear") {
    hp.rope_scaling = RopeScalingType::kLinear;
  } else if (type == "yarn") {
    hp.rope_scaling = RopeScalingType::kYarn;
  } else if (type == "longrope" && hp.spec->Needs(TensorRole::kRopeFactorsLong)) {
    // Phi-3's long context: its rope_factors_long/short tensors carry it
    // (RotaryEmbedding); no factor is applied on top.
    hp.rope_scaling = RopeScalingType::kNone;
  } else {
    return Status::Error(
        fmt::format("rope.scaling.type '{}' is not supported for {}", type, hp.arch));
  }
  float factor = 0.0f;
  if (file.Find(p + "rope.scaling.factor") != nullptr) {
    H2O_ASSIGN_OR_RETURN(factor, file.GetF32(p + "rope.scaling.factor"));
  } else {
    H2O_ASSIGN_OR_RETURN(factor, file.GetF32Or(p + "rope.scale_linear", 0.0f));
  }
  if (factor < 0.0f || !std::isfinite(factor)) {
    return Status::Error(fmt::format("bad rope.scaling.factor {}", factor));
  }
  // 0 means "not set" in llama.cpp's files.
  hp.rope_freq_scale =
      factor == 0.0f || hp.rope_scaling == RopeScalingType::kNone ? 1.0f : 1.0f / factor;
  uint32_t u = 0;
  H2O_ASSIGN_OR_RETURN(u, file.GetU32Or(p + "rope.scaling.original_context_length", 0));
  hp.n_ctx_orig = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(hp.rope_attn_factor, file.GetF32Or(p + "rope.scaling.attn_factor", 1.0f));
  if (!(hp.rope_attn_factor > 0.0f) || !std::isfinite(hp.rope_attn_factor)) {
    return Status::Error(fmt::format("bad rope.scaling.attn_factor {}", hp.rope_attn_factor));
  }
  return Status::Ok();
}

Result<int32_t> ReadPositive(const gguf::File& file, const std::string& key) {
  H2O_ASSIGN_OR_RETURN(const uint32_t u, file.GetU32(key));
  if (u == 0 || u > (1u << 30)) return Status::Error(fmt::format("bad {} {}", key, u));
  return static_cast<int32_t>(u);
}

// Gemma 3: with attention.sliding_window set, layers il % 6 < 5 see only the
// window (llama.cpp's set_swa_pattern(6)); every sixth is global.
Status ReadSlidingWindow(const gguf::File& file, const std::string& p, HParams& hp) {
  if (hp.spec->swa_pattern == 0) return Status::Ok();
  H2O_ASSIGN_OR_RETURN(const uint32_t window, file.GetU32Or(p + "attention.sliding_window", 0));
  if (window == 0) return Status::Ok();
  if (window > (1u << 30))
    return Status::Error(fmt::format("bad attention.sliding_window {}", window));
  hp.layer_window.assign(hp.n_layer, 0);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    if (l % hp.spec->swa_pattern < hp.spec->swa_pattern - 1) {
      hp.layer_window[l] = static_cast<int32_t>(window);
    }
  }
  H2O_ASSIGN_OR_RETURN(hp.rope_freq_base_swa, file.GetF32Or(p + "rope.freq_base_swa", 10000.0f));
  if (!(hp.rope_freq_base_swa > 0.0f) || !std::isfinite(hp.rope_freq_base_swa)) {
    return Status::Error(fmt::format("bad rope.freq_base_swa {}", hp.rope_freq_base_swa));
  }
  return Status::Ok();
}

}  // namespace

Result<HParams> ReadHParams(const gguf::File& file) {
  HParams hp;
  H2O_ASSIGN_OR_RETURN(hp.arch, file.GetString("general.architecture"));
  hp.spec = FindArch(hp.arch);
  if (hp.spec == nullptr) {
    return Status::Error(
        fmt::format("architecture '{}' is not supported (supported: {})", hp.arch, ArchNames()));
  }
  const ArchSpec& spec = *hp.spec;
  hp.rope_mode = spec.positions == PositionKind::kRopeNormal ? kernels::RopeMode::kNormal
                                                             : kernels::RopeMode::kNeox;
  const std::string p = hp.arch + ".";
  H2O_ASSIGN_OR_RETURN(hp.n_ctx_train, ReadPositive(file, p + "context_length"));
  H2O_ASSIGN_OR_RETURN(hp.n_embd, ReadPositive(file, p + "embedding_length"));
  H2O_ASSIGN_OR_RETURN(hp.n_layer, ReadPositive(file, p + "block_count"));
  H2O_ASSIGN_OR_RETURN(hp.n_ff, ReadPositive(file, p + "feed_forward_length"));
  H2O_ASSIGN_OR_RETURN(hp.n_head, ReadPositive(file, p + "attention.head_count"));
  hp.n_head_kv = hp.n_head;
  if (file.Find(p + "attention.head_count_kv") != nullptr) {
    H2O_ASSIGN_OR_RETURN(hp.n_head_kv, ReadPositive(file, p + "attention.head_count_kv"));
  }
  if (hp.n_head % hp.n_head_kv != 0) {
    return Status::Error(fmt::format("head_count {} is not a multiple of head_count_kv {}",
                                     hp.n_head, hp.n_head_kv));
  }
  H2O_ASSIGN_OR_RETURN(
      hp.norm_eps, file.GetF32(p + (spec.norm == NormKind::kRms ? "attention.layer_norm_rms_epsilon"
                                                                : "attention.layer_norm_epsilon")));
  if (!(hp.norm_eps >= 0.0f) || !std::isfinite(hp.norm_eps)) {
    return Status::Error(fmt::format("bad normalization epsilon {}", hp.norm_eps));
  }
  // Llama 3.2 and Gemma have heads wider than n_embd / n_head: the file says
  // so in key_length; without it, heads split the embedding evenly.
  if (file.Find(p + "attention.key_length") == nullptr && hp.n_embd % hp.n_head != 0) {
    return Status::Error(fmt::format("embedding_length {} is not a multiple of head_count {}",
                                     hp.n_embd, hp.n_head));
  }
  hp.head_dim = hp.n_embd / hp.n_head;
  if (file.Find(p + "attention.key_length") != nullptr) {
    H2O_ASSIGN_OR_RETURN(hp.head_dim, ReadPositive(file, p + "attention.key_length"));
  }
  H2O_ASSIGN_OR_RETURN(const uint32_t value_length,
                       file.GetU32Or(p + "attention.value_length", hp.head_dim));
  if (static_cast<int32_t>(value_length) != hp.head_dim) {
    return Status::Error(
        fmt::format("attention.value_length {} differs from key_length {}: "
                    "not supported",
                    value_length, hp.head_dim));
  }
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  // llama.cpp's Gemma 3 27B (62 layers) scales by n_embd / n_head instead,
  // as gemma_pytorch's config does.
  if (spec.name == "gemma3" && hp.n_layer == 62) {
    hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_embd / hp.n_head));
  }
  if (spec.embed_scale) hp.embed_scale = std::sqrt(static_cast<float>(hp.n_embd));
  H2O_ASSIGN_OR_RETURN(hp.final_logit_softcap, file.GetF32Or(p + "final_logit_softcapping", 0.0f));
  if (!(hp.final_logit_softcap >= 0.0f) || !std::isfinite(hp.final_logit_softcap)) {
    return Status::Error(fmt::format("bad final_logit_softcapping {}", hp.final_logit_softcap));
  }
  if (spec.parallel_residual_key) {
    if (file.Find(p + "use_parallel_residual") == nullptr) {
      return Status::Error(fmt::format("missing required key '{}use_parallel_residual'", p));
    }
    H2O_ASSIGN_OR_RETURN(hp.parallel_residual, file.GetBoolOr(p + "use_parallel_residual", false));
  }
  H2O_RETURN_IF_ERROR(ReadSlidingWindow(file, p, hp));

  if (!spec.rotary()) {
    hp.n_rot = 0;
    return hp;
  }
  H2O_ASSIGN_OR_RETURN(hp.rope_freq_base, file.GetF32Or(p + "rope.freq_base", 10000.0f));
  if (!(hp.rope_freq_base > 0.0f) || !std::isfinite(hp.rope_freq_base)) {
    return Status::Error(fmt::format("bad rope.freq_base {}", hp.rope_freq_base));
  }
  // RoPE turns pairs of dimensions: an odd head can only rotate part of it.
  if (spec.positions == PositionKind::kRopeNormal && hp.head_dim % 2 != 0) {
    return Status::Error(fmt::format("head dimension {} is odd; RoPE needs it even", hp.head_dim));
  }
  H2O_RETURN_IF_ERROR(ReadRopeScaling(file, p, hp));
  H2O_ASSIGN_OR_RETURN(const uint32_t n_rot,
                       file.GetU32Or(p + "rope.dimension_count", hp.head_dim));
  hp.n_rot = static_cast<int32_t>(n_rot);
  // llama.cpp refuses partial rotary for llama too (its Q/K permutation
  // assumes every dim rotates); GPT-NeoX rotates a fraction of each head.
  if (spec.positions == PositionKind::kRopeNormal && hp.n_rot != hp.head_dim) {
    return Status::Error(fmt::format("rope.dimension_count {} differs from the head dimension {}",
                                     hp.n_rot, hp.head_dim));
  }
  if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0) {
    return Status::Error(
        fmt::format("rope.dimension_count {} must be even and in [2, {}]", hp.n_rot, hp.head_dim));
  }
  if (hp.n_ctx_orig <= 0) hp.n_ctx_orig = hp.n_ctx_train;
  return hp;
}

}  // namespace h2o
