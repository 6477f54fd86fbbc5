// Hyperparameters of a decoder-only model, read from GGUF metadata. Each
// supported architecture is a row of data (ArchSpec), not a code path.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "kernels/ops.h"

namespace h2o {
namespace gguf {
class File;
}

struct HParams {
  std::string arch;         // "llama"
  int32_t n_vocab = 0;
  int32_t n_ctx_train = 0;  // {arch}.context_length
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;     // n_embd / n_head
  int32_t n_ff = 0;
  int32_t n_rot = 0;        // rotated dims per head ({arch}.rope.dimension_count)
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
  kernels::RopeMode rope_mode = kernels::RopeMode::kNormal;

  int32_t n_group() const { return n_head / n_head_kv; }  // query heads per KV head
  int32_t kv_dim() const { return n_head_kv * head_dim; }
};

// Reads and validates the hyperparameters. Errors name the missing or bad
// key, or say that the architecture is not supported (and which are).
Result<HParams> ReadHParams(const gguf::File& file);

}  // namespace h2o
