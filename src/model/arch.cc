#include "model/arch.h"

#include <array>

namespace h2o {
namespace {

using enum TensorRole;
constexpr Need kReq = Need::kRequired;
constexpr Need kOpt = Need::kOptional;

// Which optional parts each architecture has, as llama.cpp b7847 loads it
// (llama-model.cpp, load_tensors): "optional" tensors are used when present.
constexpr TensorNeed kLlama[] = {{kOutput, kOpt},
                                 {kRopeFreqs, kOpt},
                                 {kAttnQkvBias, kOpt},
                                 {kAttnOutputBias, kOpt},
                                 {kFfnBias, kOpt}};
constexpr TensorNeed kQwen2[] = {{kOutput, kOpt}, {kOutputBias, kOpt}, {kAttnQkvBias, kOpt}};
constexpr TensorNeed kQwen3[] = {{kOutput, kOpt}, {kAttnQkNorm, kReq}};
constexpr TensorNeed kPhi3[] = {
    {kOutput, kOpt}, {kRopeFactorsLong, kOpt}, {kRopeFactorsShort, kOpt}};
constexpr TensorNeed kGemma3[] = {
    {kOutput, kOpt}, {kAttnQkNorm, kReq}, {kAttnPostNorm, kReq}, {kFfnPostNorm, kReq}};
constexpr TensorNeed kGptNeox[] = {
    {kOutput, kReq}, {kAttnQkvBias, kReq}, {kAttnOutputBias, kReq}, {kFfnBias, kReq}};
constexpr TensorNeed kGpt2[] = {{kPositionEmbd, kReq},
                                {kOutput, kOpt},
                                {kAttnQkvBias, kReq},
                                {kAttnOutputBias, kReq},
                                {kFfnBias, kReq}};

constexpr std::array<ArchSpec, 7> kArchs = {{
    {.name = "llama",
     .norm = NormKind::kRms,
     .ffn = FfnKind::kSwiGlu,
     .positions = PositionKind::kRopeNormal,
     .tensors = kLlama},
    {.name = "qwen2",
     .norm = NormKind::kRms,
     .ffn = FfnKind::kSwiGlu,
     .positions = PositionKind::kRopeNeox,
     .tensors = kQwen2},
    {.name = "qwen3",
     .norm = NormKind::kRms,
     .ffn = FfnKind::kSwiGlu,
     .positions = PositionKind::kRopeNeox,
     .tensors = kQwen3},
    {.name = "phi3",
     .norm = NormKind::kRms,
     .ffn = FfnKind::kSwiGlu,
     .positions = PositionKind::kRopeNeox,
     .fused_qkv = true,
     .fused_gate_up = true,
     .tensors = kPhi3},
    {.name = "gemma3",
     .norm = NormKind::kRms,
     .ffn = FfnKind::kGeGlu,
     .positions = PositionKind::kRopeNeox,
     .embed_scale = true,
     .swa_pattern = 6,
     .tensors = kGemma3},
    {.name = "gptneox",
     .norm = NormKind::kLayer,
     .ffn = FfnKind::kGelu,
     .positions = PositionKind::kRopeNeox,
     .fused_qkv = true,
     .parallel_residual_key = true,
     .tensors = kGptNeox},
    {.name = "gpt2",
     .norm = NormKind::kLayer,
     .ffn = FfnKind::kGelu,
     .positions = PositionKind::kLearned,
     .fused_qkv = true,
     .tensors = kGpt2},
}};

}  // namespace

std::optional<Need> ArchSpec::Needs(TensorRole role) const {
  for (const TensorNeed& t : tensors) {
    if (t.role == role) return t.need;
  }
  return std::nullopt;
}

const ArchSpec* FindArch(std::string_view name) {
  for (const ArchSpec& a : kArchs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string ArchNames() {
  std::string out;
  for (const ArchSpec& a : kArchs) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

}  // namespace h2o
