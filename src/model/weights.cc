#include "model/weights.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "gguf/file.h"
#include "kernels/quant.h"

namespace h2o {
namespace {

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "}";
}

// Reads the tensors of one file against one spec; every error names the
// tensor (the model prefixes the path).
class Loader {
 public:
  Loader(const gguf::File& file, const ArchSpec& spec) : file_(file), spec_(spec) {}

  Result<const gguf::TensorInfo*> Find(const std::string& name) const {
    const gguf::TensorInfo* t = file_.FindTensor(name);
    if (t == nullptr) return Status::Error(fmt::format("missing tensor '{}'", name));
    // The file may hold any GGML type (it opened); running needs kernels.
    H2O_RETURN_IF_ERROR(CheckRunnable(t->name, t->type));
    return t;
  }

  Result<WeightMatrix> Matrix(const std::string& name, int64_t rows, int64_t cols) const {
    H2O_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Find(name));
    if (t->dims.size() != 2 || t->dims[0] != cols || t->dims[1] != rows) {
      return Status::Error(fmt::format("tensor '{}' has shape {}, expected {{{}, {}}}", name,
                                       DimsString(t->dims), cols, rows));
    }
    return WeightMatrix{t->type, t->data, rows, cols};
  }

  Result<std::vector<float>> Vector(const std::string& name, int64_t n) const {
    H2O_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Find(name));
    if (t->dims.size() != 1 || t->dims[0] != n) {
      return Status::Error(
          fmt::format("tensor '{}' has shape {}, expected {{{}}}", name, DimsString(t->dims), n));
    }
    if (n % TraitsOf(t->type).block_size != 0) {
      return Status::Error(fmt::format("tensor '{}' length {} is not a whole number of {} blocks",
                                       name, n, TraitsOf(t->type).name));
    }
    std::vector<float> out(n);
    kernels::DequantizeRow(t->type, t->data, out.data(), n);
    return out;
  }

  // A vector of `role`: required (an error when missing), optional (empty
  // when missing) or, for roles the architecture never has, empty.
  Result<std::vector<float>> VectorOf(TensorRole role, const std::string& name, int64_t n) const {
    const std::optional<Need> need = spec_.Needs(role);
    if (!need || (*need == Need::kOptional && file_.FindTensor(name) == nullptr)) {
      return std::vector<float>();
    }
    return Vector(name, n);
  }

  Result<NormWeights> Norm(const std::string& base, int64_t n) const {
    NormWeights norm;
    H2O_ASSIGN_OR_RETURN(norm.weight, Vector(base + ".weight", n));
    if (spec_.norm == NormKind::kLayer) {
      H2O_ASSIGN_OR_RETURN(norm.bias, Vector(base + ".bias", n));
    }
    return norm;
  }

  Result<NormWeights> NormOf(TensorRole role, const std::string& base, int64_t n) const {
    if (!spec_.Needs(role)) return NormWeights();
    return Norm(base, n);
  }

  bool Has(const std::string& name) const { return file_.FindTensor(name) != nullptr; }

 private:
  const gguf::File& file_;
  const ArchSpec& spec_;
};

// Q, K and V with their biases, separate or fused (split at load).
Status LoadAttention(const Loader& in, const ArchSpec& spec, const HParams& hp,
                     const std::string& b, LayerWeights& lw) {
  const int64_t n_embd = hp.n_embd, q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
  if (spec.fused_qkv) {
    H2O_ASSIGN_OR_RETURN(lw.wqkv, in.Matrix(b + "attn_qkv.weight", q_dim + 2 * kv_dim, n_embd));
    H2O_ASSIGN_OR_RETURN(
        const std::vector<float> bqkv,
        in.VectorOf(TensorRole::kAttnQkvBias, b + "attn_qkv.bias", q_dim + 2 * kv_dim));
    if (!bqkv.empty()) {
      lw.bq.assign(bqkv.begin(), bqkv.begin() + q_dim);
      lw.bk.assign(bqkv.begin() + q_dim, bqkv.begin() + q_dim + kv_dim);
      lw.bv.assign(bqkv.begin() + q_dim + kv_dim, bqkv.end());
    }
  } else {
    H2O_ASSIGN_OR_RETURN(lw.wq, in.Matrix(b + "attn_q.weight", q_dim, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.wk, in.Matrix(b + "attn_k.weight", kv_dim, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.wv, in.Matrix(b + "attn_v.weight", kv_dim, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.bq, in.VectorOf(TensorRole::kAttnQkvBias, b + "attn_q.bias", q_dim));
    H2O_ASSIGN_OR_RETURN(lw.bk, in.VectorOf(TensorRole::kAttnQkvBias, b + "attn_k.bias", kv_dim));
    H2O_ASSIGN_OR_RETURN(lw.bv, in.VectorOf(TensorRole::kAttnQkvBias, b + "attn_v.bias", kv_dim));
  }
  H2O_ASSIGN_OR_RETURN(lw.q_norm,
                       in.VectorOf(TensorRole::kAttnQkNorm, b + "attn_q_norm.weight", hp.head_dim));
  H2O_ASSIGN_OR_RETURN(lw.k_norm,
                       in.VectorOf(TensorRole::kAttnQkNorm, b + "attn_k_norm.weight", hp.head_dim));
  H2O_ASSIGN_OR_RETURN(lw.wo, in.Matrix(b + "attn_output.weight", n_embd, q_dim));
  H2O_ASSIGN_OR_RETURN(lw.bo,
                       in.VectorOf(TensorRole::kAttnOutputBias, b + "attn_output.bias", n_embd));
  return Status::Ok();
}

Status LoadFfn(const Loader& in, const ArchSpec& spec, const HParams& hp, const std::string& b,
               LayerWeights& lw) {
  const int64_t n_embd = hp.n_embd, n_ff = hp.n_ff;
  const bool gated = spec.ffn != FfnKind::kGelu;
  if (gated && !spec.fused_gate_up) {
    H2O_ASSIGN_OR_RETURN(lw.w_gate, in.Matrix(b + "ffn_gate.weight", n_ff, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.b_gate, in.VectorOf(TensorRole::kFfnBias, b + "ffn_gate.bias", n_ff));
  }
  const int64_t up_rows = spec.fused_gate_up ? 2 * n_ff : n_ff;
  H2O_ASSIGN_OR_RETURN(lw.w_up, in.Matrix(b + "ffn_up.weight", up_rows, n_embd));
  H2O_ASSIGN_OR_RETURN(lw.b_up, in.VectorOf(TensorRole::kFfnBias, b + "ffn_up.bias", up_rows));
  H2O_ASSIGN_OR_RETURN(lw.w_down, in.Matrix(b + "ffn_down.weight", n_embd, n_ff));
  H2O_ASSIGN_OR_RETURN(lw.b_down, in.VectorOf(TensorRole::kFfnBias, b + "ffn_down.bias", n_embd));
  return Status::Ok();
}

// rope_freqs and Phi-3's long/short factors: one positive divisor per
// rotated pair.
Result<std::vector<float>> FrequencyFactors(const Loader& in, TensorRole role,
                                            const std::string& name, const HParams& hp) {
  H2O_ASSIGN_OR_RETURN(std::vector<float> factors, in.VectorOf(role, name, hp.n_rot / 2));
  for (const float f : factors) {
    if (!(f > 0.0f) || !std::isfinite(f)) {
      return Status::Error(fmt::format(
          "tensor '{}' holds {}; frequency factors must be positive and finite", name, f));
    }
  }
  return factors;
}

}  // namespace

Result<ModelWeights> LoadWeights(const gguf::File& file, HParams& hp) {
  const ArchSpec& spec = *hp.spec;
  const Loader in(file, spec);
  ModelWeights w;
  H2O_ASSIGN_OR_RETURN(const gguf::TensorInfo* embd, in.Find("token_embd.weight"));
  if (embd->dims.size() != 2 || embd->dims[0] != hp.n_embd) {
    return Status::Error(
        fmt::format("tensor 'token_embd.weight' has shape {}, expected {{{}, "
                    "n_vocab}}",
                    DimsString(embd->dims), hp.n_embd));
  }
  hp.n_vocab = static_cast<int32_t>(embd->dims[1]);
  const int64_t n_embd = hp.n_embd;
  H2O_ASSIGN_OR_RETURN(w.token_embd, in.Matrix("token_embd.weight", hp.n_vocab, n_embd));
  if (spec.Needs(TensorRole::kPositionEmbd)) {
    H2O_ASSIGN_OR_RETURN(w.position_embd,
                         in.Matrix("position_embd.weight", hp.n_ctx_train, n_embd));
  }
  H2O_ASSIGN_OR_RETURN(w.output_norm, in.Norm("output_norm", n_embd));
  if (spec.Needs(TensorRole::kOutput) == Need::kRequired || in.Has("output.weight")) {
    H2O_ASSIGN_OR_RETURN(w.output, in.Matrix("output.weight", hp.n_vocab, n_embd));
  } else {
    w.output = w.token_embd;
    w.tied_output = true;
  }
  H2O_ASSIGN_OR_RETURN(w.output_bias,
                       in.VectorOf(TensorRole::kOutputBias, "output.bias", hp.n_vocab));
  if (spec.rotary()) {
    H2O_ASSIGN_OR_RETURN(w.rope_freqs,
                         FrequencyFactors(in, TensorRole::kRopeFreqs, "rope_freqs.weight", hp));
    H2O_ASSIGN_OR_RETURN(w.rope_factors_long, FrequencyFactors(in, TensorRole::kRopeFactorsLong,
                                                               "rope_factors_long.weight", hp));
    H2O_ASSIGN_OR_RETURN(w.rope_factors_short, FrequencyFactors(in, TensorRole::kRopeFactorsShort,
                                                                "rope_factors_short.weight", hp));
  }
  w.layers.resize(hp.n_layer);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    LayerWeights& lw = w.layers[l];
    const std::string b = fmt::format("blk.{}.", l);
    H2O_ASSIGN_OR_RETURN(lw.attn_norm, in.Norm(b + "attn_norm", n_embd));
    H2O_RETURN_IF_ERROR(LoadAttention(in, spec, hp, b, lw));
    H2O_ASSIGN_OR_RETURN(lw.attn_post_norm,
                         in.NormOf(TensorRole::kAttnPostNorm, b + "post_attention_norm", n_embd));
    H2O_ASSIGN_OR_RETURN(lw.ffn_norm, in.Norm(b + "ffn_norm", n_embd));
    H2O_RETURN_IF_ERROR(LoadFfn(in, spec, hp, b, lw));
    H2O_ASSIGN_OR_RETURN(lw.ffn_post_norm,
                         in.NormOf(TensorRole::kFfnPostNorm, b + "post_ffw_norm", n_embd));
  }
  return w;
}

}  // namespace h2o
