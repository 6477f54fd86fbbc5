#include "model/hparams.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "gguf/file.h"

namespace h2o {
namespace {

// What differs between LLaMA-family architectures that share one forward.
struct ArchSpec {
  const char* name;
  kernels::RopeMode rope_mode;
};

// LLaMA GGUF files store Q/K permuted for the interleaved ("normal") RoPE.
constexpr std::array<ArchSpec, 1> kArchs = {{
    {"llama", kernels::RopeMode::kNormal},
}};

std::string SupportedArchs() {
  std::string out;
  for (const ArchSpec& a : kArchs) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

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
  } else {
    return Status::Error(
        fmt::format("rope.scaling.type '{}' is not supported (none, linear, yarn)", type));
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

}  // namespace

Result<HParams> ReadHParams(const gguf::File& file) {
  HParams hp;
  H2O_ASSIGN_OR_RETURN(hp.arch, file.GetString("general.architecture"));
  const ArchSpec* spec = nullptr;
  for (const ArchSpec& a : kArchs) {
    if (hp.arch == a.name) spec = &a;
  }
  if (spec == nullptr) {
    return Status::Error(fmt::format("architecture '{}' is not supported (supported: {})", hp.arch,
                                     SupportedArchs()));
  }
  hp.rope_mode = spec->rope_mode;
  const std::string p = hp.arch + ".";
  uint32_t u = 0;
  H2O_ASSIGN_OR_RETURN(u, file.GetU32(p + "context_length"));
  hp.n_ctx_train = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(u, file.GetU32(p + "embedding_length"));
  hp.n_embd = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(u, file.GetU32(p + "block_count"));
  hp.n_layer = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(u, file.GetU32(p + "feed_forward_length"));
  hp.n_ff = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(u, file.GetU32(p + "attention.head_count"));
  hp.n_head = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(u, file.GetU32Or(p + "attention.head_count_kv", u));
  hp.n_head_kv = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(hp.rms_eps, file.GetF32(p + "attention.layer_norm_rms_epsilon"));
  H2O_ASSIGN_OR_RETURN(hp.rope_freq_base, file.GetF32Or(p + "rope.freq_base", 10000.0f));
  if (!(hp.rope_freq_base > 0.0f)) {
    return Status::Error(fmt::format("bad rope.freq_base {}", hp.rope_freq_base));
  }
  H2O_RETURN_IF_ERROR(ReadRopeScaling(file, p, hp));

  if (hp.n_layer <= 0 || hp.n_embd <= 0 || hp.n_head <= 0 || hp.n_ff <= 0 || hp.n_ctx_train <= 0) {
    return Status::Error(
        "hyperparameters must be positive (block_count, embedding_length, "
        "head_count, feed_forward_length, context_length)");
  }
  if (hp.n_head_kv <= 0 || hp.n_head % hp.n_head_kv != 0) {
    return Status::Error(fmt::format("head_count {} is not a multiple of head_count_kv {}",
                                     hp.n_head, hp.n_head_kv));
  }
  // Llama 3.2 and Gemma have heads wider than n_embd / n_head: the file says
  // so in key_length; without it, heads split the embedding evenly.
  if (file.Find(p + "attention.key_length") == nullptr && hp.n_embd % hp.n_head != 0) {
    return Status::Error(fmt::format("embedding_length {} is not a multiple of head_count {}",
                                     hp.n_embd, hp.n_head));
  }
  H2O_ASSIGN_OR_RETURN(
      u, file.GetU32Or(p + "attention.key_length", static_cast<uint32_t>(hp.n_embd / hp.n_head)));
  hp.head_dim = static_cast<int32_t>(u);
  H2O_ASSIGN_OR_RETURN(u, file.GetU32Or(p + "attention.value_length", u));
  if (static_cast<int32_t>(u) != hp.head_dim) {
    return Status::Error(
        fmt::format("attention.value_length {} differs from key_length {}: "
                    "not supported",
                    u, hp.head_dim));
  }
  if (hp.head_dim <= 0) return Status::Error("attention.key_length must be positive");
  H2O_ASSIGN_OR_RETURN(u, file.GetU32Or(p + "rope.dimension_count", hp.head_dim));
  hp.n_rot = static_cast<int32_t>(u);
  if (hp.n_rot != hp.head_dim) {
    return Status::Error(
        fmt::format("partial RoPE (rope.dimension_count {} != head dim {}) is "
                    "not supported",
                    hp.n_rot, hp.head_dim));
  }
  if (hp.head_dim % 2 != 0) return Status::Error("head dimension must be even for RoPE");
  if (hp.n_ctx_orig <= 0) hp.n_ctx_orig = hp.n_ctx_train;
  return hp;
}

}  // namespace h2o
