#include "model/model.h"

namespace h2o {

Result<std::unique_ptr<Model>> Model::Load(const std::string& path,
                                           const ModelLoadOptions& options) {
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
  if (options.repack) {
    auto panels = WeightPanels::Pack(model->weights_, *model->file_, options.n_threads);
    if (!panels.ok()) return panels.status().WithContext(path + ": repacking the weights");
    model->panels_ = std::move(panels).value();
  }
  model->MakeRopes();
  return model;
}

void Model::MakeRopes() {
  const HParams& hp = hparams_;
  const ModelWeights& w = weights_;
  if (!hp.spec->rotary()) return;
  if (!w.rope_factors_short.empty() || !w.rope_factors_long.empty()) {
    rope_ = std::make_unique<RotaryEmbedding>(hp, w.rope_factors_short);
    rope_long_ = std::make_unique<RotaryEmbedding>(hp, w.rope_factors_long);
  } else {
    rope_ = std::make_unique<RotaryEmbedding>(hp, w.rope_freqs);
  }
  if (!hp.layer_window.empty()) {
    // llama.cpp gives windowed layers their own base and no scaling (the
    // attention factor is the global one).
    HParams window = hp;
    window.rope_freq_base = hp.rope_freq_base_swa;
    window.rope_scaling = RopeScalingType::kNone;
    rope_window_ = std::make_unique<RotaryEmbedding>(window, std::span<const float>());
  }
}

std::vector<const RotaryEmbedding*> Model::LayerRopes(int32_t n_ctx) const {
  const HParams& hp = hparams_;
  if (rope_ == nullptr) return {};
  const RotaryEmbedding* global =
      rope_long_ != nullptr && n_ctx > hp.n_ctx_orig ? rope_long_.get() : rope_.get();
  std::vector<const RotaryEmbedding*> ropes(hp.n_layer, global);
  for (int32_t l = 0; l < hp.n_layer; ++l) {
    if (hp.window(l) > 0) ropes[l] = rope_window_.get();
  }
  return ropes;
}

}  // namespace h2o
