#include "model/hparams.h"

#include <array>

#include <fmt/format.h>

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

}  // namespace

Result<HParams> ReadHParams(const gguf::File& file) {
  HParams hp;
  H2O_ASSIGN_OR_RETURN(hp.arch, file.GetString("general.architecture"));
  const ArchSpec* spec = nullptr;
  for (const ArchSpec& a : kArchs) {
    if (hp.arch == a.name) spec = &a;
  }
  if (spec == nullptr) {
    return Status::Error(fmt::format("architecture '{}' is not supported (supported: {})",
                                     hp.arch, SupportedArchs()));
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
  float scale = 1.0f;
  H2O_ASSIGN_OR_RETURN(scale, file.GetF32Or(p + "rope.scale_linear", 1.0f));
  if (file.Find(p + "rope.scaling.type") != nullptr) {
    std::string type;
    H2O_ASSIGN_OR_RETURN(type, file.GetString(p + "rope.scaling.type"));
    if (type == "linear") {
      H2O_ASSIGN_OR_RETURN(scale, file.GetF32Or(p + "rope.scaling.factor", 1.0f));
    } else if (type != "none") {
      return Status::Error(fmt::format("RoPE scaling type '{}' is not supported", type));
    }
  }
  if (!(scale > 0.0f)) return Status::Error(fmt::format("bad RoPE scaling factor {}", scale));
  hp.rope_freq_scale = 1.0f / scale;

  if (hp.n_layer <= 0 || hp.n_embd <= 0 || hp.n_head <= 0 || hp.n_ff <= 0 ||
      hp.n_ctx_train <= 0) {
    return Status::Error("hyperparameters must be positive (block_count, embedding_length, "
                         "head_count, feed_forward_length, context_length)");
  }
  if (hp.n_head_kv <= 0 || hp.n_head % hp.n_head_kv != 0) {
    return Status::Error(fmt::format("head_count {} is not a multiple of head_count_kv {}",
                                     hp.n_head, hp.n_head_kv));
  }
  if (hp.n_embd % hp.n_head != 0) {
    return Status::Error(fmt::format("embedding_length {} is not a multiple of head_count {}",
                                     hp.n_embd, hp.n_head));
  }
  hp.head_dim = hp.n_embd / hp.n_head;
  H2O_ASSIGN_OR_RETURN(u, file.GetU32Or(p + "rope.dimension_count", hp.head_dim));
  hp.n_rot = static_cast<int32_t>(u);
  if (hp.n_rot != hp.head_dim) {
    return Status::Error(fmt::format("partial RoPE (rope.dimension_count {} != head dim {}) is "
                                     "not supported",
                                     hp.n_rot, hp.head_dim));
  }
  if (hp.head_dim % 2 != 0) return Status::Error("head dimension must be even for RoPE");
  return hp;
}

}  // namespace h2o
