// Random llama models. Every weight row comes from its own std::mt19937_64
// seeded from (seed, tensor name, row index): the engine's output is fixed
// by the C++ standard, rows can be generated in any order and on any thread,
// and no tensor has to exist in memory before the writer asks for it.
// Values use integer arithmetic plus one double multiply, so they are the
// same on every standard library and compiler (no std::normal_distribution,
// no libm).
#include "convert/mkmodel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

#include "core/tensor_type.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "kernels/quant.h"
#include "kernels/thread_pool.h"
#include "tokenizer/vocab.h"

namespace h2o {
namespace {

constexpr float kWeightStd = 0.02f;        // GPT-2/LLaMA-style initializer_range
constexpr int64_t kFixedTokens = 3 + 256;  // <unk> <s> </s> and the byte tokens

// Upper limits that keep every size within u32 metadata and int32 ids.
constexpr int64_t kMaxEmbd = 1 << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxFf = 1 << 18;
constexpr int64_t kMaxVocab = 1 << 24;
constexpr int64_t kMaxCtx = 1 << 24;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a64(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// Fills row[0..n) with approximately normal values of standard deviation
// `std`: each 64-bit draw is split into four 16-bit uniforms whose sum
// (Irwin-Hall with 4 terms) is centred and scaled to unit variance. Values
// are bounded by 2*sqrt(3)*std, like a truncated-normal initializer.
void NormalRow(uint64_t row_seed, float std, float* row, int64_t n) {
  std::mt19937_64 rng(row_seed);
  // Var of a uniform on 0..65535 is (65536^2 - 1) / 12; of the sum, 4x that.
  const double scale = static_cast<double>(std) * 1.7320508075688772 / 65536.0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t u = rng();
    const int64_t sum = static_cast<int64_t>((u & 0xFFFF) + ((u >> 16) & 0xFFFF) +
                                             ((u >> 32) & 0xFFFF) + (u >> 48));
    row[i] = static_cast<float>(static_cast<double>(sum - 131070) * scale);  // mean 131070
  }
}

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

bool IsQuantized(TensorType type) { return TraitsOf(type).block_size > 1; }

Status CheckRange(const char* flag, int64_t v, int64_t max) {
  if (v <= 0) return Status::Error(fmt::format("{} must be positive, got {}", flag, v));
  if (v > max) return Status::Error(fmt::format("{} {} is too large (at most {})", flag, v, max));
  return Status::Ok();
}

// A synthetic SentencePiece vocabulary laid out like LLaMA's: <unk> <s>
// </s>, the byte-fallback tokens <0x00>..<0xFF>, then pieces "▁t<id>".
void SetVocab(gguf::Writer& w, int64_t n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {static_cast<int32_t>(TokenType::kUnknown),
                                static_cast<int32_t>(TokenType::kControl),
                                static_cast<int32_t>(TokenType::kControl)};
  tokens.reserve(n_vocab);
  types.reserve(n_vocab);
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(static_cast<int32_t>(TokenType::kByte));
  }
  std::vector<float> scores(kFixedTokens, 0.0f);
  scores.reserve(n_vocab);
  for (int64_t id = kFixedTokens; id < n_vocab; ++id) {
    tokens.push_back(fmt::format("{}t{}", kSpaceMarker, id));
    types.push_back(static_cast<int32_t>(TokenType::kNormal));
    scores.push_back(-static_cast<float>(id - kFixedTokens));  // earlier pieces merge first
  }
  w.SetString("tokenizer.ggml.model", "llama");
  w.SetStringArray("tokenizer.ggml.tokens", std::move(tokens));
  w.SetF32Array("tokenizer.ggml.scores", scores);
  w.SetI32Array("tokenizer.ggml.token_type", types);
  w.SetU32("tokenizer.ggml.bos_token_id", 1);
  w.SetU32("tokenizer.ggml.eos_token_id", 2);
  w.SetU32("tokenizer.ggml.unknown_token_id", 0);
}

// Copies every tokenizer.* key of `path` (a model or a vocab-only GGUF) and
// returns its token count.
Result<int64_t> CopyVocab(gguf::Writer& w, const std::string& path) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<gguf::File> file, gguf::File::Open(path));
  if (file->Find("tokenizer.ggml.tokens") == nullptr) {
    return Status::Error(path + ": --vocab-from file has no tokenizer (tokenizer.ggml.tokens)");
  }
  H2O_ASSIGN_OR_RETURN(const std::vector<std::string> tokens,
                       file->GetStringArray("tokenizer.ggml.tokens"));
  for (const gguf::KeyValue& kv : file->metadata()) {
    if (kv.key.starts_with("tokenizer.")) w.Set(kv.key, kv.value);
  }
  return static_cast<int64_t>(tokens.size());
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

// Adds `name` ({cols, rows}: rows of `cols` elements) whose rows are drawn
// when the writer asks for the data.
Status AddRandomMatrix(gguf::Writer& w, kernels::ThreadPool& pool, uint64_t seed,
                       const std::string& name, TensorType type, int64_t cols, int64_t rows,
                       float gain = 1.0f) {
  const uint64_t tensor_seed = SplitMix64(seed ^ SplitMix64(Fnv1a64(name)));
  const size_t row_bytes = RowBytes(type, cols);
  return w.AddTensorLazy(name, type, {cols, rows}, [=, &pool](void* dst) {
    pool.ParallelFor(rows, [&](int64_t begin, int64_t end) {
      std::vector<float> row(cols);
      for (int64_t r = begin; r < end; ++r) {
        NormalRow(SplitMix64(tensor_seed + static_cast<uint64_t>(r)), kWeightStd * gain, row.data(),
                  cols);
        kernels::QuantizeRow(type, row.data(), static_cast<uint8_t*>(dst) + r * row_bytes, cols);
      }
    });
  });
}

Status AddOnes(gguf::Writer& w, const std::string& name, int64_t n) {
  const std::vector<float> ones(n, 1.0f);
  return w.AddTensor(name, TensorType::kF32, {n}, ones.data(), ones.size() * sizeof(float));
}

}  // namespace

int64_t HeadDim(const MkModelOptions& o) {
  return o.head_dim > 0 ? o.head_dim : o.n_embd / o.n_head;
}

Status CheckMkModelOptions(const MkModelOptions& o) {
  if (o.arch != "llama") {
    return Status::Error(fmt::format("unsupported --arch '{}' (supported: llama)", o.arch));
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
  if (head_dim % 2 != 0) {
    return Status::Error(
        fmt::format("the head dimension {} is odd (RoPE needs an even one)", head_dim));
  }
  if (o.vocab_from.empty() && o.n_vocab < kFixedTokens) {
    return Status::Error(fmt::format(
        "--vocab {} is too small: at least {} tokens (<unk>, <s>, </s> and 256 byte tokens)",
        o.n_vocab, kFixedTokens));
  }
  const int64_t block = TraitsOf(*type).block_size;
  const int64_t q_dim = o.n_head * head_dim;
  if (o.n_embd % block != 0 || o.n_ff % block != 0 || q_dim % block != 0) {
    return Status::Error(fmt::format(
        "--type {} needs --dim, --ffn and --heads x head dimension to be multiples of {} (got "
        "{}, {} and {})",
        o.type, block, o.n_embd, o.n_ff, q_dim));
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
  if (!o.rope_freqs.empty() && o.rope_freqs != "llama3") {
    return Status::Error(fmt::format("unknown --rope-freqs '{}' (expected llama3)", o.rope_freqs));
  }
  if (!(o.sharpen > 0.0f) || !std::isfinite(o.sharpen)) {
    return Status::Error(fmt::format("--sharpen must be positive, got {}", o.sharpen));
  }
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

MkModelSize EstimateMkModel(const MkModelOptions& o, int64_t n_vocab) {
  const TensorType type = *ParseTensorType(o.type);
  const int64_t head_dim = HeadDim(o);
  const int64_t q_dim = o.n_head * head_dim;
  const int64_t kv_dim = head_dim * o.n_head_kv;
  MkModelSize s;
  auto add = [&](TensorType t, int64_t cols, int64_t rows) {
    s.n_params += cols * rows;
    s.data_bytes += static_cast<uint64_t>(RowBytes(t, cols)) * rows;
  };
  add(type, o.n_embd, n_vocab);               // token_embd
  if (!o.tied) add(type, o.n_embd, n_vocab);  // output
  add(TensorType::kF32, o.n_embd, 1);         // output_norm
  if (o.rope_freqs == "llama3") add(TensorType::kF32, head_dim / 2, 1);
  for (int64_t l = 0; l < o.n_layer; ++l) {
    add(TensorType::kF32, o.n_embd, 2);       // attn_norm, ffn_norm
    add(type, o.n_embd, q_dim + kv_dim * 2);  // q, k, v
    add(type, q_dim, o.n_embd);               // output
    add(type, o.n_embd, o.n_ff * 2);          // gate, up
    add(type, o.n_ff, o.n_embd);              // down
  }
  return s;
}

Result<MkModelSize> MakeRandomModel(const MkModelOptions& o) {
  H2O_RETURN_IF_ERROR(CheckMkModelOptions(o));
  const TensorType type = *ParseTensorType(o.type);
  const int64_t n_embd = o.n_embd, n_ff = o.n_ff;
  const int64_t head_dim = HeadDim(o);
  const int64_t q_dim = o.n_head * head_dim;
  const int64_t kv_dim = head_dim * o.n_head_kv;

  gguf::Writer w;
  int64_t n_vocab = o.n_vocab;
  if (o.vocab_from.empty()) {
    SetVocab(w, n_vocab);
  } else {
    H2O_ASSIGN_OR_RETURN(n_vocab, CopyVocab(w, o.vocab_from));
  }
  w.SetString("general.architecture", "llama");
  w.SetString("general.name", o.name.empty() ? fmt::format("random llama {}x{} {} seed {}",
                                                           o.n_layer, n_embd, o.type, o.seed)
                                             : o.name);
  w.SetU32("general.file_type", *FileType(o.type));
  if (IsQuantized(type)) w.SetU32("general.quantization_version", 2);
  w.SetU32("llama.context_length", static_cast<uint32_t>(o.n_ctx));
  w.SetU32("llama.embedding_length", static_cast<uint32_t>(n_embd));
  w.SetU32("llama.feed_forward_length", static_cast<uint32_t>(n_ff));
  w.SetU32("llama.block_count", static_cast<uint32_t>(o.n_layer));
  w.SetU32("llama.attention.head_count", static_cast<uint32_t>(o.n_head));
  w.SetU32("llama.attention.head_count_kv", static_cast<uint32_t>(o.n_head_kv));
  if (o.head_dim != 0) {
    w.SetU32("llama.attention.key_length", static_cast<uint32_t>(head_dim));
    w.SetU32("llama.attention.value_length", static_cast<uint32_t>(head_dim));
  }
  w.SetU32("llama.rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.SetF32("llama.rope.freq_base", o.rope_base);
  if (!o.rope_scaling.empty()) {
    w.SetString("llama.rope.scaling.type", o.rope_scaling);
    w.SetF32("llama.rope.scaling.factor", o.rope_factor);
    w.SetU32("llama.rope.scaling.original_context_length",
             static_cast<uint32_t>(o.rope_orig_ctx > 0 ? o.rope_orig_ctx : o.n_ctx));
  }
  w.SetF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.SetU32("llama.vocab_size", static_cast<uint32_t>(n_vocab));

  const int n_threads = o.n_threads > 0
                            ? o.n_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  kernels::ThreadPool pool(n_threads);
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float gain = 1.0f) {
    return AddRandomMatrix(w, pool, o.seed, name, type, cols, rows, gain);
  };
  H2O_RETURN_IF_ERROR(matrix("token_embd.weight", n_embd, n_vocab));
  if (o.rope_freqs == "llama3") {
    const std::vector<float> factors = Llama3RopeFreqs(head_dim, o.rope_base);
    H2O_RETURN_IF_ERROR(w.AddTensor("rope_freqs.weight", TensorType::kF32,
                                    {static_cast<int64_t>(factors.size())}, factors.data(),
                                    factors.size() * sizeof(float)));
  }
  for (int64_t l = 0; l < o.n_layer; ++l) {
    const std::string b = fmt::format("blk.{}.", l);
    H2O_RETURN_IF_ERROR(AddOnes(w, b + "attn_norm.weight", n_embd));
    H2O_RETURN_IF_ERROR(matrix(b + "attn_q.weight", n_embd, q_dim, o.sharpen));
    H2O_RETURN_IF_ERROR(matrix(b + "attn_k.weight", n_embd, kv_dim, o.sharpen));
    H2O_RETURN_IF_ERROR(matrix(b + "attn_v.weight", n_embd, kv_dim));
    H2O_RETURN_IF_ERROR(matrix(b + "attn_output.weight", q_dim, n_embd));
    H2O_RETURN_IF_ERROR(AddOnes(w, b + "ffn_norm.weight", n_embd));
    H2O_RETURN_IF_ERROR(matrix(b + "ffn_gate.weight", n_embd, n_ff));
    H2O_RETURN_IF_ERROR(matrix(b + "ffn_down.weight", n_ff, n_embd));
    H2O_RETURN_IF_ERROR(matrix(b + "ffn_up.weight", n_embd, n_ff));
  }
  H2O_RETURN_IF_ERROR(AddOnes(w, "output_norm.weight", n_embd));
  if (!o.tied) H2O_RETURN_IF_ERROR(matrix("output.weight", n_embd, n_vocab, o.sharpen));
  H2O_RETURN_IF_ERROR(w.Write(o.output_path));
  return EstimateMkModel(o, n_vocab);
}

}  // namespace h2o
