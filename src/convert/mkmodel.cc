// Random models of any supported architecture: the metadata keys and
// tensors llama.cpp's converters write for it (model/arch.h says which),
// with seeded random values (convert/random_tensors.h).
#include "convert/mkmodel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "convert/mkmodel_vocab.h"
#include "convert/random_tensors.h"
#include "core/tensor_type.h"
#include "gguf/writer.h"
#include "kernels/thread_pool.h"
#include "model/arch.h"

namespace h2o {
namespace {

constexpr float kWeightStd = 0.02f;  // GPT-2/LLaMA-style initializer_range

// Upper limits that keep every size within u32 metadata and int32 ids.
constexpr int64_t kMaxEmbd = 1 << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxFf = 1 << 18;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxCtx = 1 << 24;

// GGML's LLAMA_FTYPE for a file whose matrices are all `type` (a K-quant
// alone is the "_S" mix's id, the closest llama.cpp has).
std::optional<uint32_t> FileType(std::string_view type) {
  static constexpr std::pair<std::string_view, uint32_t> kFileTypes[] = {
      {"f32", 0},   {"f16", 1},   {"q4_0", 2},  {"q4_1", 3},  {"q8_0", 7},
      {"q5_0", 8},  {"q5_1", 9},  {"q2_K", 10}, {"q3_K", 11}, {"q4_K", 14},
      {"q5_K", 16}, {"q6_K", 18}, {"bf16", 32},
  };
  for (const auto& [name, id] : kFileTypes) {
    if (name == type) return id;
  }
  return std::nullopt;
}

Status CheckRange(const char* flag, int64_t v, int64_t max) {
  if (v <= 0) return Status::Error(fmt::format("{} must be positive, got {}", flag, v));
  if (v > max) return Status::Error(fmt::format("{} {} is too large (at most {})", flag, v, max));
  return Status::Ok();
}

// Llama 3.1's rope_freqs (from its rope_scaling: factor 8, low and high
// frequency factors 1 and 4, original context 8192): pairs whose wavelength
// is below 8192 / 4 keep their frequency, above 8192 / 1 are slowed by 8,
// and a smooth mix between.
std::vector<float> Llama3RopeFreqs(int64_t n_rot, double base) {
  constexpr double kFactor = 8, kLowFreqFactor = 1, kHighFreqFactor = 4, kOldContext = 8192;
  std::vector<float> factors;
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double freq = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
    const double wavelen = 2 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelen > kOldContext / kLowFreqFactor) {
      f = kFactor;
    } else if (wavelen >= kOldContext / kHighFreqFactor) {
      const double smooth =
          (kOldContext / wavelen - kLowFreqFactor) / (kHighFreqFactor - kLowFreqFactor);
      f = 1.0 / ((1 - smooth) / kFactor + smooth);
    }
    factors.push_back(static_cast<float>(f));
  }
  return factors;
}

// Synthetic Phi-3 LongRoPE divisors shaped like Phi-3.5-mini's: slow pairs
// divided more, up to 1.2 within the original context (short) and 40
// beyond it (long).
std::vector<float> LongRopeFactors(int64_t n_rot, float max_factor) {
  const int64_t half = n_rot / 2;
  std::vector<float> factors(half);
  for (int64_t i = 0; i < half; ++i) {
    const double t = half > 1 ? static_cast<double>(i) / static_cast<double>(half - 1) : 0.0;
    factors[i] = static_cast<float>(1.0 + (max_factor - 1.0) * t * t);
  }
  return factors;
}

Status AddF32(gguf::Writer& w, const std::string& name, const std::vector<float>& v) {
  return w.AddTensor(name, TensorType::kF32, {static_cast<int64_t>(v.size())}, v.data(),
                     v.size() * sizeof(float));
}

int64_t RopeDims(const MkModelOptions& o, int64_t head_dim) {
  if (o.rope_dims > 0) return o.rope_dims;
  // Pythia rotates a quarter of each head (rotary_pct 0.25).
  return o.arch == "gptneox" ? head_dim / 4 : head_dim;
}

Status CheckPositions(const MkModelOptions& o, const ArchSpec& spec, int64_t head_dim) {
  if (!spec.rotary()) {
    if (o.rope_dims != 0 || !o.rope_scaling.empty() || !o.rope_freqs.empty() ||
        o.rope_base != 10000.0f) {
      return Status::Error(
          fmt::format("--arch {} has learned positions: no --rope-* options", o.arch));
    }
    return Status::Ok();
  }
  if (head_dim % 2 != 0) {
    return Status::Error(
        fmt::format("the head dimension {} is odd (RoPE needs an even one)", head_dim));
  }
  const int64_t n_rot = RopeDims(o, head_dim);
  if (n_rot < 2 || n_rot > head_dim || n_rot % 2 != 0) {
    return Status::Error(
        fmt::format("--rope-dims {} must be even and in [2, {}]", n_rot, head_dim));
  }
  if (spec.positions == PositionKind::kRopeNormal && n_rot != head_dim) {
    return Status::Error(
        fmt::format("--arch {} rotates whole heads: --rope-dims must be {}", o.arch, head_dim));
  }
  if (!(o.rope_base > 1.0f) || !std::isfinite(o.rope_base)) {
    return Status::Error(fmt::format("--rope-base must be above 1, got {}", o.rope_base));
  }
  if (!o.rope_scaling.empty() && o.rope_scaling != "linear" && o.rope_scaling != "yarn") {
    return Status::Error(
        fmt::format("unknown --rope-scaling '{}' (expected linear or yarn)", o.rope_scaling));
  }
  if (!(o.rope_factor > 0.0f) || !std::isfinite(o.rope_factor)) {
    return Status::Error(fmt::format("--rope-factor must be positive, got {}", o.rope_factor));
  }
  if (o.rope_orig_ctx < 0 || o.rope_orig_ctx > kMaxCtx) {
    return Status::Error(fmt::format("bad --rope-orig-ctx {}", o.rope_orig_ctx));
  }
  const bool llama3 = o.rope_freqs == "llama3" && spec.Needs(TensorRole::kRopeFreqs);
  const bool longrope = o.rope_freqs == "longrope" && spec.Needs(TensorRole::kRopeFactorsLong);
  if (!o.rope_freqs.empty() && !llama3 && !longrope) {
    return Status::Error(
        fmt::format("unknown --rope-freqs '{}' for --arch {} (llama: llama3; phi3: longrope)",
                    o.rope_freqs, o.arch));
  }
  return Status::Ok();
}

// The optional tensors the real files of an architecture have, which
// mkmodel writes too (the others it leaves out, as real files do).
bool WritesOptional(const MkModelOptions& o, TensorRole role) {
  return o.arch == "qwen2" && role == TensorRole::kAttnQkvBias;
}

// Writes the metadata and the tensors, counting what it adds.
class ModelWriter {
 public:
  ModelWriter(const MkModelOptions& o, const ArchSpec& spec, kernels::ThreadPool& pool)
      : o_(o), spec_(spec), type_(*ParseTensorType(o.type)), pool_(pool) {}

  gguf::Writer& writer() { return w_; }
  const MkModelSize& size() const { return size_; }

  bool Has(TensorRole role) const {
    const std::optional<Need> need = spec_.Needs(role);
    return need == Need::kRequired || (need == Need::kOptional && WritesOptional(o_, role));
  }

  Status Matrix(const std::string& name, int64_t cols, int64_t rows, float gain = 1.0f) {
    Count(type_, cols, rows);
    return AddRandomMatrix(w_, pool_, o_.seed, name, type_, cols, rows, kWeightStd * gain);
  }
  // A matrix kept in f32 whatever --type (position embeddings: any width).
  Status F32Matrix(const std::string& name, int64_t cols, int64_t rows) {
    Count(TensorType::kF32, cols, rows);
    return AddRandomMatrix(w_, pool_, o_.seed, name, TensorType::kF32, cols, rows, kWeightStd);
  }
  Status Bias(const std::string& name, int64_t n) {
    Count(TensorType::kF32, n, 1);
    return AddRandomVector(w_, o_.seed, name, n, 0.0f, kWeightStd);
  }
  // A norm's weight (1, or 1 + noise with --norm-std) and, for LayerNorm,
  // its bias.
  Status Norm(const std::string& base, int64_t n) {
    Count(TensorType::kF32, n, 1);
    H2O_RETURN_IF_ERROR(AddRandomVector(w_, o_.seed, base + ".weight", n, 1.0f, o_.norm_std));
    if (spec_.norm == NormKind::kLayer) return Bias(base + ".bias", n);
    return Status::Ok();
  }
  Status Vector(const std::string& name, const std::vector<float>& v) {
    Count(TensorType::kF32, static_cast<int64_t>(v.size()), 1);
    return AddF32(w_, name, v);
  }

 private:
  void Count(TensorType t, int64_t cols, int64_t rows) {
    size_.n_params += cols * rows;
    size_.data_bytes += static_cast<uint64_t>(RowBytes(t, cols)) * rows;
  }

  const MkModelOptions& o_;
  const ArchSpec& spec_;
  TensorType type_;
  kernels::ThreadPool& pool_;
  gguf::Writer w_;
  MkModelSize size_;
};

void WriteMetadata(gguf::Writer& w, const MkModelOptions& o, const ArchSpec& spec, int64_t head_dim,
                   int64_t n_vocab) {
  const std::string p = o.arch + ".";
  const TensorType type = *ParseTensorType(o.type);
  w.SetString("general.architecture", o.arch);
  // llama.cpp sets token attributes by the name, and "phi3" in it wants
  // Phi-3's own special tokens, which a synthetic vocabulary lacks.
  const std::string arch_in_name = o.arch == "phi3" ? "phi 3" : o.arch;
  w.SetString("general.name", o.name.empty()
                                  ? fmt::format("random {} {}x{} {} seed {}", arch_in_name,
                                                o.n_layer, o.n_embd, o.type, o.seed)
                                  : o.name);
  w.SetU32("general.file_type", *FileType(o.type));
  if (TraitsOf(type).block_size > 1) w.SetU32("general.quantization_version", 2);
  w.SetU32(p + "context_length", static_cast<uint32_t>(o.n_ctx));
  w.SetU32(p + "embedding_length", static_cast<uint32_t>(o.n_embd));
  w.SetU32(p + "feed_forward_length", static_cast<uint32_t>(o.n_ff));
  w.SetU32(p + "block_count", static_cast<uint32_t>(o.n_layer));
  w.SetU32(p + "attention.head_count", static_cast<uint32_t>(o.n_head));
  w.SetU32(p + "attention.head_count_kv", static_cast<uint32_t>(o.n_head_kv));
  if (o.head_dim != 0) {
    w.SetU32(p + "attention.key_length", static_cast<uint32_t>(head_dim));
    w.SetU32(p + "attention.value_length", static_cast<uint32_t>(head_dim));
  }
  if (spec.rotary()) {
    w.SetU32(p + "rope.dimension_count", static_cast<uint32_t>(RopeDims(o, head_dim)));
    w.SetF32(p + "rope.freq_base", o.rope_base);
    if (!o.rope_scaling.empty()) {
      w.SetString(p + "rope.scaling.type", o.rope_scaling);
      w.SetF32(p + "rope.scaling.factor", o.rope_factor);
    }
    if (!o.rope_scaling.empty() || o.rope_freqs == "longrope") {
      w.SetU32(p + "rope.scaling.original_context_length",
               static_cast<uint32_t>(o.rope_orig_ctx > 0 ? o.rope_orig_ctx : o.n_ctx));
    }
  }
  w.SetF32(p + (spec.norm == NormKind::kRms ? "attention.layer_norm_rms_epsilon"
                                            : "attention.layer_norm_epsilon"),
           1e-5f);
  if (o.arch == "gptneox") w.SetBool(p + "use_parallel_residual", true);
  if (spec.swa_pattern > 0 && o.window > 0) {
    w.SetU32(p + "attention.sliding_window", static_cast<uint32_t>(o.window));
    w.SetF32(p + "rope.freq_base_swa", 10000.0f);
  }
  w.SetU32(p + "vocab_size", static_cast<uint32_t>(n_vocab));
}

Status WriteLayer(ModelWriter& m, const MkModelOptions& o, const ArchSpec& spec, int64_t l,
                  int64_t q_dim, int64_t kv_dim, int64_t head_dim) {
  const int64_t n_embd = o.n_embd, n_ff = o.n_ff;
  const std::string b = fmt::format("blk.{}.", l);
  H2O_RETURN_IF_ERROR(m.Norm(b + "attn_norm", n_embd));
  const bool qkv_bias = m.Has(TensorRole::kAttnQkvBias);
  if (spec.fused_qkv) {
    // --sharpen scales the whole fused matrix: its Q and K rows with the V rows.
    H2O_RETURN_IF_ERROR(m.Matrix(b + "attn_qkv.weight", n_embd, q_dim + 2 * kv_dim, o.sharpen));
    if (qkv_bias) H2O_RETURN_IF_ERROR(m.Bias(b + "attn_qkv.bias", q_dim + 2 * kv_dim));
  } else {
    H2O_RETURN_IF_ERROR(m.Matrix(b + "attn_q.weight", n_embd, q_dim, o.sharpen));
    H2O_RETURN_IF_ERROR(m.Matrix(b + "attn_k.weight", n_embd, kv_dim, o.sharpen));
    H2O_RETURN_IF_ERROR(m.Matrix(b + "attn_v.weight", n_embd, kv_dim));
    if (qkv_bias) {
      H2O_RETURN_IF_ERROR(m.Bias(b + "attn_q.bias", q_dim));
      H2O_RETURN_IF_ERROR(m.Bias(b + "attn_k.bias", kv_dim));
      H2O_RETURN_IF_ERROR(m.Bias(b + "attn_v.bias", kv_dim));
    }
  }
  if (m.Has(TensorRole::kAttnQkNorm)) {
    H2O_RETURN_IF_ERROR(m.Norm(b + "attn_q_norm", head_dim));
    H2O_RETURN_IF_ERROR(m.Norm(b + "attn_k_norm", head_dim));
  }
  H2O_RETURN_IF_ERROR(m.Matrix(b + "attn_output.weight", q_dim, n_embd));
  if (m.Has(TensorRole::kAttnOutputBias))
    H2O_RETURN_IF_ERROR(m.Bias(b + "attn_output.bias", n_embd));
  if (m.Has(TensorRole::kAttnPostNorm))
    H2O_RETURN_IF_ERROR(m.Norm(b + "post_attention_norm", n_embd));
  H2O_RETURN_IF_ERROR(m.Norm(b + "ffn_norm", n_embd));
  const bool ffn_bias = m.Has(TensorRole::kFfnBias);
  if (spec.ffn != FfnKind::kGelu && !spec.fused_gate_up) {
    H2O_RETURN_IF_ERROR(m.Matrix(b + "ffn_gate.weight", n_embd, n_ff));
  }
  // gate, down, up: the order of earlier mkmodel files, so they stay byte
  // for byte what they were.
  H2O_RETURN_IF_ERROR(m.Matrix(b + "ffn_down.weight", n_ff, n_embd));
  if (ffn_bias) H2O_RETURN_IF_ERROR(m.Bias(b + "ffn_down.bias", n_embd));
  const int64_t up_rows = spec.fused_gate_up ? 2 * n_ff : n_ff;
  H2O_RETURN_IF_ERROR(m.Matrix(b + "ffn_up.weight", n_embd, up_rows));
  if (ffn_bias) H2O_RETURN_IF_ERROR(m.Bias(b + "ffn_up.bias", up_rows));
  if (m.Has(TensorRole::kFfnPostNorm)) H2O_RETURN_IF_ERROR(m.Norm(b + "post_ffw_norm", n_embd));
  return Status::Ok();
}

}  // namespace

int64_t HeadDim(const MkModelOptions& o) {
  return o.head_dim > 0 ? o.head_dim : o.n_embd / o.n_head;
}

Status CheckMkModelOptions(const MkModelOptions& o) {
  const ArchSpec* spec = FindArch(o.arch);
  if (spec == nullptr) {
    return Status::Error(
        fmt::format("unsupported --arch '{}' (supported: {})", o.arch, ArchNames()));
  }
  const std::optional<TensorType> type = ParseTensorType(o.type);
  if (!type || !FileType(o.type)) {
    return Status::Error(
        fmt::format("unknown --type '{}' (expected one of {})", o.type, MkModelTypeNames()));
  }
  H2O_RETURN_IF_ERROR(CheckRange("--dim", o.n_embd, kMaxEmbd));
  H2O_RETURN_IF_ERROR(CheckRange("--layers", o.n_layer, kMaxLayers));
  H2O_RETURN_IF_ERROR(CheckRange("--heads", o.n_head, kMaxHeads));
  H2O_RETURN_IF_ERROR(CheckRange("--kv-heads", o.n_head_kv, kMaxHeads));
  H2O_RETURN_IF_ERROR(CheckRange("--ffn", o.n_ff, kMaxFf));
  H2O_RETURN_IF_ERROR(CheckRange("--vocab", o.n_vocab, kMaxVocab));
  H2O_RETURN_IF_ERROR(CheckRange("--ctx", o.n_ctx, kMaxCtx));
  if (o.head_dim != 0) H2O_RETURN_IF_ERROR(CheckRange("--head-dim", o.head_dim, kMaxEmbd));
  if (o.head_dim == 0 && o.n_embd % o.n_head != 0) {
    return Status::Error(
        fmt::format("--dim {} is not a multiple of --heads {}", o.n_embd, o.n_head));
  }
  if (o.n_head % o.n_head_kv != 0) {
    return Status::Error(
        fmt::format("--heads {} is not a multiple of --kv-heads {}", o.n_head, o.n_head_kv));
  }
  const int64_t head_dim = HeadDim(o);
  H2O_RETURN_IF_ERROR(CheckPositions(o, *spec, head_dim));
  if (o.vocab_from.empty() && o.n_vocab < kMkModelFixedTokens) {
    return Status::Error(fmt::format(
        "--vocab {} is too small: at least {} tokens (<unk>, <s>, </s> and 256 byte tokens)",
        o.n_vocab, kMkModelFixedTokens));
  }
  const int64_t block = TraitsOf(*type).block_size;
  const int64_t q_dim = o.n_head * head_dim;
  if (o.n_embd % block != 0 || o.n_ff % block != 0 || q_dim % block != 0) {
    return Status::Error(fmt::format(
        "--type {} needs --dim, --ffn and --heads x head dimension to be multiples of {} (got "
        "{}, {} and {})",
        o.type, block, o.n_embd, o.n_ff, q_dim));
  }
  if (!(o.sharpen > 0.0f) || !std::isfinite(o.sharpen)) {
    return Status::Error(fmt::format("--sharpen must be positive, got {}", o.sharpen));
  }
  if (!(o.norm_std >= 0.0f) || !std::isfinite(o.norm_std)) {
    return Status::Error(fmt::format("--norm-std must be 0 or more, got {}", o.norm_std));
  }
  if (o.tied && spec->Needs(TensorRole::kOutput) == Need::kRequired) {
    return Status::Error(fmt::format("--arch {} has its own output matrix: no --tied", o.arch));
  }
  if (o.window != 0 && spec->swa_pattern == 0) {
    return Status::Error(
        fmt::format("--arch {} has no sliding-window layers: no --window", o.arch));
  }
  if (o.window < 0 || o.window > kMaxCtx)
    return Status::Error(fmt::format("bad --window {}", o.window));
  if (o.output_path.empty()) return Status::Error("no output file (-o)");
  return Status::Ok();
}

std::string MkModelTypeNames() {
  std::string out;
  for (const std::string_view name : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
                                      "q2_K", "q3_K", "q4_K", "q5_K", "q6_K"}) {
    if (!ParseTensorType(name)) continue;  // not runnable in this build
    out += (out.empty() ? "" : ", ") + std::string(name);
  }
  return out;
}

Result<MkModelSize> MakeRandomModel(const MkModelOptions& o) {
  H2O_RETURN_IF_ERROR(CheckMkModelOptions(o));
  const ArchSpec& spec = *FindArch(o.arch);
  const int64_t n_embd = o.n_embd;
  const int64_t head_dim = HeadDim(o);
  const int64_t q_dim = o.n_head * head_dim;
  const int64_t kv_dim = head_dim * o.n_head_kv;

  const int n_threads = o.n_threads > 0
                            ? o.n_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  kernels::ThreadPool pool(n_threads);
  ModelWriter m(o, spec, pool);
  gguf::Writer& w = m.writer();
  // The tokenizer's keys first, then the model's (the order of the files
  // tests/data/peer was quantized from).
  int64_t n_vocab = o.n_vocab;
  if (o.vocab_from.empty()) {
    SetSyntheticVocab(w, n_vocab);
  } else {
    H2O_ASSIGN_OR_RETURN(n_vocab, CopyVocab(w, o.vocab_from));
  }
  WriteMetadata(w, o, spec, head_dim, n_vocab);

  H2O_RETURN_IF_ERROR(m.Matrix("token_embd.weight", n_embd, n_vocab));
  if (m.Has(TensorRole::kPositionEmbd)) {
    H2O_RETURN_IF_ERROR(m.F32Matrix("position_embd.weight", n_embd, o.n_ctx));
  }
  if (o.rope_freqs == "llama3") {
    H2O_RETURN_IF_ERROR(
        m.Vector("rope_freqs.weight", Llama3RopeFreqs(RopeDims(o, head_dim), o.rope_base)));
  } else if (o.rope_freqs == "longrope") {
    H2O_RETURN_IF_ERROR(
        m.Vector("rope_factors_long.weight", LongRopeFactors(RopeDims(o, head_dim), 40.0f)));
    H2O_RETURN_IF_ERROR(
        m.Vector("rope_factors_short.weight", LongRopeFactors(RopeDims(o, head_dim), 1.2f)));
  }
  for (int64_t l = 0; l < o.n_layer; ++l) {
    H2O_RETURN_IF_ERROR(WriteLayer(m, o, spec, l, q_dim, kv_dim, head_dim));
  }
  H2O_RETURN_IF_ERROR(m.Norm("output_norm", n_embd));
  if (!o.tied) H2O_RETURN_IF_ERROR(m.Matrix("output.weight", n_embd, n_vocab, o.sharpen));
  H2O_RETURN_IF_ERROR(w.Write(o.output_path));
  return m.size();
}

}  // namespace h2o
