#include "model/weights.h"

#include <fmt/format.h>

#include <cmath>

#include "gguf/file.h"
#include "kernels/quant.h"

namespace h2o {
namespace {

std::string DimsString(const std::vector<int64_t>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "}";
}

Result<const gguf::TensorInfo*> FindTensor(const gguf::File& file, const std::string& name) {
  const gguf::TensorInfo* t = file.FindTensor(name);
  if (t == nullptr) return Status::Error(fmt::format("missing tensor '{}'", name));
  // The file may hold any GGML type (it opened); running needs kernels.
  H2O_RETURN_IF_ERROR(CheckRunnable(t->name, t->type));
  return t;
}

Result<WeightMatrix> Matrix(const gguf::File& file, const std::string& name, int64_t rows,
                            int64_t cols) {
  H2O_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, FindTensor(file, name));
  if (t->dims.size() != 2 || t->dims[0] != cols || t->dims[1] != rows) {
    return Status::Error(fmt::format("tensor '{}' has shape {}, expected {{{}, {}}}", name,
                                     DimsString(t->dims), cols, rows));
  }
  return WeightMatrix{t->type, t->data, rows, cols};
}

Result<std::vector<float>> Vector(const gguf::File& file, const std::string& name, int64_t n) {
  H2O_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, FindTensor(file, name));
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

}  // namespace

Result<ModelWeights> LoadWeights(const gguf::File& file, HParams& hp) {
  ModelWeights w;
  H2O_ASSIGN_OR_RETURN(const gguf::TensorInfo* embd, FindTensor(file, "token_embd.weight"));
  if (embd->dims.size() != 2 || embd->dims[0] != hp.n_embd) {
    return Status::Error(
        fmt::format("tensor 'token_embd.weight' has shape {}, expected {{{}, "
                    "n_vocab}}",
                    DimsString(embd->dims), hp.n_embd));
  }
  hp.n_vocab = static_cast<int32_t>(embd->dims[1]);
  const int64_t n_embd = hp.n_embd;
  const int64_t q_dim = hp.q_dim();
  H2O_ASSIGN_OR_RETURN(w.token_embd, Matrix(file, "token_embd.weight", hp.n_vocab, n_embd));
  H2O_ASSIGN_OR_RETURN(w.output_norm, Vector(file, "output_norm.weight", n_embd));
  if (file.FindTensor("output.weight") != nullptr) {
    H2O_ASSIGN_OR_RETURN(w.output, Matrix(file, "output.weight", hp.n_vocab, n_embd));
  } else {
    w.output = w.token_embd;
    w.tied_output = true;
  }
  if (file.FindTensor("rope_freqs.weight") != nullptr) {
    H2O_ASSIGN_OR_RETURN(w.rope_freqs, Vector(file, "rope_freqs.weight", hp.n_rot / 2));
    for (const float f : w.rope_freqs) {
      if (!(f > 0.0f) || !std::isfinite(f)) {
        return Status::Error(
            fmt::format("tensor 'rope_freqs.weight' holds {}; frequency factors "
                        "must be positive and finite",
                        f));
      }
    }
  }
  w.layers.resize(hp.n_layer);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    LayerWeights& lw = w.layers[l];
    const std::string b = fmt::format("blk.{}.", l);
    H2O_ASSIGN_OR_RETURN(lw.attn_norm, Vector(file, b + "attn_norm.weight", n_embd));
    H2O_ASSIGN_OR_RETURN(lw.wq, Matrix(file, b + "attn_q.weight", q_dim, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.wk, Matrix(file, b + "attn_k.weight", hp.kv_dim(), n_embd));
    H2O_ASSIGN_OR_RETURN(lw.wv, Matrix(file, b + "attn_v.weight", hp.kv_dim(), n_embd));
    H2O_ASSIGN_OR_RETURN(lw.wo, Matrix(file, b + "attn_output.weight", n_embd, q_dim));
    H2O_ASSIGN_OR_RETURN(lw.ffn_norm, Vector(file, b + "ffn_norm.weight", n_embd));
    H2O_ASSIGN_OR_RETURN(lw.w_gate, Matrix(file, b + "ffn_gate.weight", hp.n_ff, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.w_up, Matrix(file, b + "ffn_up.weight", hp.n_ff, n_embd));
    H2O_ASSIGN_OR_RETURN(lw.w_down, Matrix(file, b + "ffn_down.weight", n_embd, hp.n_ff));
  }
  return w;
}

}  // namespace h2o
