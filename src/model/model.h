// A loaded model: the mapped GGUF file, its hyperparameters and weight
// views. Immutable after Load(), so one Model serves many Sessions
// (thread-safe for concurrent reads).
#pragma once

#include <memory>
#include <string>

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
  const RotaryEmbedding& rope() const { return *rope_; }

 private:
  Model() = default;
  std::unique_ptr<gguf::File> file_;
  HParams hparams_;
  ModelWeights weights_;
  std::unique_ptr<RotaryEmbedding> rope_;
};

}  // namespace h2o
