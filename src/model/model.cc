#include "model/model.h"

namespace h2o {

Result<std::unique_ptr<Model>> Model::Load(const std::string& path) {
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  std::unique_ptr<Model> model(new Model());
  model->file_ = std::move(file).value();
  auto hparams = ReadHParams(*model->file_);
  if (!hparams.ok()) return hparams.status().WithContext(path);
  model->hparams_ = std::move(hparams).value();
  auto weights = LoadWeights(*model->file_, model->hparams_);
  if (!weights.ok()) return weights.status().WithContext(path);
  model->weights_ = std::move(weights).value();
  model->rope_ = std::make_unique<RotaryEmbedding>(model->hparams_, model->weights_.rope_freqs);
  return model;
}

}  // namespace h2o
