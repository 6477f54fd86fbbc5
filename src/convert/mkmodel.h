// Random-weight GGUF models with real shapes (`h2o mkmodel`), so speed and
// memory can be measured at any model size without downloading weights,
// and h2o.cpp compared with llama.cpp on architectures we have no trained
// weights of. The file is a standard GGUF of its architecture (tensor
// names, metadata, a synthetic SentencePiece vocabulary or a copied real
// one) that llama.cpp loads as well.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace h2o {

struct MkModelOptions {
  std::string arch = "llama";  // any of ArchNames() (model/arch.h)
  int64_t n_embd = 2048;       // defaults: TinyLlama-1.1B's shape
  int64_t n_layer = 22;
  int64_t n_head = 32;
  int64_t n_head_kv = 4;
  int64_t n_ff = 5632;
  int64_t n_vocab = 32000;  // >= 259: <unk>, <s>, </s> and the 256 byte tokens
  int64_t n_ctx = 4096;
  std::string type = "f16";  // token_embd, output and all matrices (MkModelTypeNames())
  uint64_t seed = 1;
  // Heads of this width (attention.key_length); 0: n_embd / n_head.
  int64_t head_dim = 0;
  float rope_base = 10000.0f;
  // Context extension written as {arch}.rope.scaling.*: "" (none written),
  // "linear" or "yarn", by rope_factor from rope_orig_ctx (0: n_ctx).
  std::string rope_scaling;
  float rope_factor = 1.0f;
  int64_t rope_orig_ctx = 0;
  // "llama3" (llama): a rope_freqs.weight tensor with Llama 3.1's frequency
  // factors (factor 8, low/high frequency factors 1 and 4, original context
  // 8192); "longrope" (phi3): synthetic rope_factors_long/short.weight,
  // long applying past rope_orig_ctx.
  std::string rope_freqs;
  // Multiplies the weights of the output, attn_q and attn_k matrices, so
  // attention is peaked (positions matter) and the top logits stand further
  // apart than quantization error: comparisons of two engines then see
  // errors that near-uniform random attention and logits would hide.
  float sharpen = 1.0f;
  // No output.weight: the output reuses token_embd (Llama 3.2, Gemma).
  bool tied = false;
  // Norm weights are 1 + noise of this std (0: exactly 1), so a forward
  // that skipped a norm's weight would show.
  float norm_std = 0.0f;
  // Rotated dims per head; 0: the whole head (gptneox: a quarter, Pythia's).
  int64_t rope_dims = 0;
  // gemma3: attention.sliding_window (every sixth layer stays global); 0:
  // none.
  int64_t window = 0;
  // A tokenizer to copy (every tokenizer.* key of this GGUF); the vocabulary
  // size is then its token count and n_vocab is ignored.
  std::string vocab_from;
  std::string name;         // general.name; empty: derived from the shape
  std::string output_path;  // written atomically: no partial file on failure
  int n_threads = 0;        // generating threads; 0: all hardware threads
};

// The head width the options give: head_dim, or n_embd / n_head.
int64_t HeadDim(const MkModelOptions& options);

// Checks the options without writing anything. Errors are one line naming
// the flag (--dim, --heads, --type, ...).
Status CheckMkModelOptions(const MkModelOptions& options);

// The --type names this build can write, comma-separated.
std::string MkModelTypeNames();

// Parameters (elements of all tensors) and tensor-data bytes of a file.
struct MkModelSize {
  int64_t n_params = 0;
  uint64_t data_bytes = 0;
};

// Writes the model. Weights are a pure function of (seed, tensor name, row):
// the same options give byte-identical files on every platform (a
// std::mt19937_64 stream per row, turned into approximately normal values
// with std 0.02 by integer arithmetic, no library distributions), and the
// files of two types from one seed hold the same values up to rounding.
// Norm weights (1.0, or 1 + noise with norm_std), biases and position
// embeddings stay F32. Tensor data is generated while the
// file is written, one tensor at a time, so memory stays near the largest
// tensor's size. Returns the size written. Errors: those of
// CheckMkModelOptions, the --vocab-from file's, or the output path ("path:
// cannot create ...").
Result<MkModelSize> MakeRandomModel(const MkModelOptions& options);

}  // namespace h2o
