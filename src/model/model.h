// A loaded model: the mapped GGUF file, its hyperparameters and weight
// views. Immutable after Load(), so one Model serves many Sessions
// (thread-safe for concurrent reads).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/file.h"
#include "model/hparams.h"
#include "model/rope.h"
#include "model/weights.h"

namespace h2o {

class Model {
 public:
  // Opens and validates a GGUF model. Every error is one line that begins
  // with the path.
  static Result<std::unique_ptr<Model>> Load(const std::string& path);

  const HParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return *file_; }
  // The rotary embedding of each layer for a sequence of up to n_ctx
  // positions: Gemma 3's windowed layers have their own base, and Phi-3
  // switches to its long-context factors past its original context, as
  // llama.cpp does. Empty for learned positions. Pointers live as long as
  // the model.
  std::vector<const RotaryEmbedding*> LayerRopes(int32_t n_ctx) const;

 private:
  Model() = default;
  void MakeRopes();
  std::unique_ptr<gguf::File> file_;
  HParams hparams_;
  ModelWeights weights_;
  // Global layers' rotary embedding within / past n_ctx_orig (the same
  // unless the file has long-context factors), and the windowed layers'.
  std::unique_ptr<RotaryEmbedding> rope_;
  std::unique_ptr<RotaryEmbedding> rope_long_;
  std::unique_ptr<RotaryEmbedding> rope_window_;
};

}  // namespace h2o
