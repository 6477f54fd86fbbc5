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
#include "model/weight_panels.h"
#include "model/weights.h"

namespace h2o {

struct ModelLoadOptions {
  // Repack the weight matrices the kernels offer panels for, once
  // (WeightPanels): faster products, at the cost of a private copy of
  // those weights instead of the file's pages (shareable between
  // processes). Off: the products read the file's rows as they are.
  bool repack = true;
  int n_threads = 1;  // that pack at once
};

class Model {
 public:
  // Opens and validates a GGUF model. Every error is one line that begins
  // with the path.
  static Result<std::unique_ptr<Model>> Load(const std::string& path,
                                             const ModelLoadOptions& options = {});

  const HParams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::File& file() const { return *file_; }
  const WeightPanels& panels() const { return panels_; }
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
  WeightPanels panels_;
  // Global layers' rotary embedding within / past n_ctx_orig (the same
  // unless the file has long-context factors), and the windowed layers'.
  std::unique_ptr<RotaryEmbedding> rope_;
  std::unique_ptr<RotaryEmbedding> rope_long_;
  std::unique_ptr<RotaryEmbedding> rope_window_;
};

}  // namespace h2o
