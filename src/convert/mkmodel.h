// Random-weight GGUF models with real shapes (`h2o mkmodel`), so speed and
// memory can be measured at any model size without downloading weights.
// The file is a standard llama GGUF (tensor names, metadata, a synthetic
// SentencePiece vocabulary) that llama.cpp could load as well.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace h2o {

struct MkModelOptions {
  std::string arch = "llama";  // the only architecture so far
  int64_t n_embd = 2048;       // defaults: TinyLlama-1.1B's shape
  int64_t n_layer = 22;
  int64_t n_head = 32;
  int64_t n_head_kv = 4;
  int64_t n_ff = 5632;
  int64_t n_vocab = 32000;  // >= 259: <unk>, <s>, </s> and the 256 byte tokens
  int64_t n_ctx = 4096;
  std::string type = "f16";  // token_embd, output and all matrices: f32 f16 bf16 q8_0 q4_0
  uint64_t seed = 1;
  std::string name;         // general.name; empty: derived from the shape
  std::string output_path;  // written atomically: no partial file on failure
  int n_threads = 0;        // generating threads; 0: all hardware threads
};

// Checks the options without writing anything. Errors are one line naming
// the flag (--dim, --heads, --type, ...).
Status CheckMkModelOptions(const MkModelOptions& options);

// Parameters (elements of all tensors) and the tensor-data bytes of the file
// the options describe (options must pass CheckMkModelOptions).
struct MkModelSize {
  int64_t n_params = 0;
  uint64_t data_bytes = 0;
};
MkModelSize EstimateMkModel(const MkModelOptions& options);

// Writes the model. Weights are a pure function of (seed, tensor name, row):
// the same options give byte-identical files on every platform (a
// std::mt19937_64 stream per row, turned into approximately normal values
// with std 0.02 by integer arithmetic, no library distributions), and the
// files of two types from one seed hold the same values up to rounding.
// Norm weights are 1.0 and stay F32. Tensor data is generated while the
// file is written, one tensor at a time, so memory stays near the largest
// tensor's size. Errors: those of CheckMkModelOptions, or the output path
// ("path: cannot create ...").
Status MakeRandomModel(const MkModelOptions& options);

}  // namespace h2o
