#include "convert/llama2c.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/mapped_file.h"
#include "gguf/writer.h"
#include "tokenizer/llama2c_vocab.h"

namespace h2o {
namespace {

struct Llama2cHeader {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

// Walks the float array of the checkpoint in file order.
class FloatCursor {
 public:
  explicit FloatCursor(const uint8_t* data) : data_(data) {}
  const float* Take(size_t n) {
    const float* p = reinterpret_cast<const float*>(data_) + used_;
    used_ += n;
    return p;
  }
  size_t used() const { return used_; }

 private:
  const uint8_t* data_;  // the size was checked against the header before
  size_t used_ = 0;
};

Status AddLayered(gguf::Writer& w, FloatCursor& c, const char* name, int64_t n_layers,
                  std::vector<int64_t> dims) {
  int64_t per_layer = 1;
  for (int64_t d : dims) per_layer *= d;
  for (int64_t l = 0; l < n_layers; ++l) {
    const float* p = c.Take(per_layer);
    H2O_RETURN_IF_ERROR(w.AddTensor(fmt::format("blk.{}.{}.weight", l, name), TensorType::kF32,
                                    dims, p, per_layer * sizeof(float)));
  }
  return Status::Ok();
}

Status Convert(const Llama2cConvertOptions& o) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> mapping, MappedFile::Open(o.checkpoint_path));
  const MappedFile& file = *mapping;
  auto checkpoint_error = [&](std::string message) {
    return Status::Error(o.checkpoint_path + ": " + message);
  };
  if (file.size() < sizeof(Llama2cHeader)) {
    return checkpoint_error(fmt::format("file is too short for a llama2.c header ({} bytes)",
                                     file.size()));
  }
  Llama2cHeader h;
  std::memcpy(&h, file.data(), sizeof(h));
  const bool shared_classifier = h.vocab_size > 0;
  const int64_t vocab = h.vocab_size > 0 ? h.vocab_size : -static_cast<int64_t>(h.vocab_size);
  if (h.dim <= 0 || h.hidden_dim <= 0 || h.n_layers <= 0 || h.n_heads <= 0 ||
      h.n_kv_heads <= 0 || vocab <= 0 || h.seq_len <= 0 || h.dim > (1 << 20) ||
      h.hidden_dim > (1 << 22) || h.n_layers > 4096 || vocab > (1 << 24)) {
    return checkpoint_error(fmt::format(
        "not a llama2.c checkpoint: implausible header (dim {}, hidden {}, layers {}, heads {}, "
        "kv heads {}, vocab {}, seq_len {})",
        h.dim, h.hidden_dim, h.n_layers, h.n_heads, h.n_kv_heads, h.vocab_size, h.seq_len));
  }
  if (h.dim % h.n_heads != 0 || h.n_heads % h.n_kv_heads != 0) {
    return checkpoint_error(fmt::format("dim {} / heads {} / kv heads {} do not divide evenly", h.dim,
                                     h.n_heads, h.n_kv_heads));
  }
  const int64_t dim = h.dim, hidden = h.hidden_dim, L = h.n_layers;
  const int64_t head_dim = dim / h.n_heads;
  const int64_t kv_dim = head_dim * h.n_kv_heads;
  const int64_t weights = vocab * dim + L * dim + L * dim * dim + 2 * L * kv_dim * dim +
                          L * dim * dim + L * dim + 3 * L * hidden * dim + dim;
  const int64_t freq_cis = static_cast<int64_t>(h.seq_len) * head_dim;  // real + imag halves
  const int64_t needed = weights + freq_cis + (shared_classifier ? 0 : vocab * dim);
  const size_t payload = file.size() - sizeof(h);
  if (payload % sizeof(float) != 0 || static_cast<int64_t>(payload / sizeof(float)) != needed) {
    return checkpoint_error(fmt::format("size {} does not match the header (expected {} bytes)",
                                     file.size(), sizeof(h) + needed * sizeof(float)));
  }

  gguf::Writer w;
  w.SetString("general.architecture", "llama");
  w.SetString("general.name", o.name);
  w.SetU32("llama.context_length", h.seq_len);
  w.SetU32("llama.embedding_length", h.dim);
  w.SetU32("llama.feed_forward_length", h.hidden_dim);
  w.SetU32("llama.block_count", h.n_layers);
  w.SetU32("llama.attention.head_count", h.n_heads);
  w.SetU32("llama.attention.head_count_kv", h.n_kv_heads);
  w.SetU32("llama.rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.SetF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);  // llama2.c's fixed value
  if (!o.tokenizer_path.empty()) {
    auto vocab_result = LoadLlama2cVocab(o.tokenizer_path, static_cast<int32_t>(vocab));
    if (!vocab_result.ok()) return vocab_result.status();
    const Vocab& v = vocab_result.value();
    std::vector<int32_t> types(v.types.size());
    for (size_t i = 0; i < v.types.size(); ++i) types[i] = static_cast<int32_t>(v.types[i]);
    w.SetString("tokenizer.ggml.model", "llama");
    w.SetStringArray("tokenizer.ggml.tokens", v.tokens);
    w.SetF32Array("tokenizer.ggml.scores", v.scores);
    w.SetI32Array("tokenizer.ggml.token_type", types);
    w.SetU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id));
    w.SetU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id));
    w.SetU32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk_id));
  }

  FloatCursor c(file.data() + sizeof(h));
  const float* embd = c.Take(vocab * dim);
  H2O_RETURN_IF_ERROR(
      w.AddTensor("token_embd.weight", TensorType::kF32, {dim, vocab}, embd, vocab * dim * 4));
  // llama2.c's [out][in] row-major matrices are GGUF's {in, out} as they are,
  // and its RoPE rotates interleaved pairs like GGUF llama: no permutation.
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "attn_norm", L, {dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "attn_q", L, {dim, dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "attn_k", L, {dim, kv_dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "attn_v", L, {dim, kv_dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "attn_output", L, {dim, dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "ffn_norm", L, {dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "ffn_gate", L, {dim, hidden}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "ffn_down", L, {hidden, dim}));
  H2O_RETURN_IF_ERROR(AddLayered(w, c, "ffn_up", L, {dim, hidden}));
  const float* out_norm = c.Take(dim);
  H2O_RETURN_IF_ERROR(
      w.AddTensor("output_norm.weight", TensorType::kF32, {dim}, out_norm, dim * 4));
  c.Take(freq_cis);  // precomputed RoPE tables: recomputed at run time
  if (!shared_classifier) {
    const float* cls = c.Take(vocab * dim);
    H2O_RETURN_IF_ERROR(
        w.AddTensor("output.weight", TensorType::kF32, {dim, vocab}, cls, vocab * dim * 4));
  }
  return w.Write(o.output_path);
}

}  // namespace

Status ConvertLlama2c(const Llama2cConvertOptions& options) { return Convert(options); }

}  // namespace h2o
