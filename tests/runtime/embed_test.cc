// Engine::Embed, the mean-pooled final hidden state behind /v1/embeddings,
// on the bundled model: unit length, the same however the text is
// chunked, and in the direction the logits are made from (for one token,
// output.weight times the embedding is parallel to the engine's logits,
// computed here in double from the file's f32 matrix).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/engine.h"
#include "test_data.h"

namespace h2o {
namespace {

std::unique_ptr<Model> Stories() {
  auto m = Model::Load(testing::ModelPath());
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

std::unique_ptr<Sequence> Fresh(Engine& engine, int32_t n_ctx, int32_t chunk,
                                const std::string& kv = "full") {
  SequenceOptions o;
  o.n_ctx = n_ctx;
  o.max_chunk = chunk;
  o.kv = ResolveKvSpec(ParseKvSpec(kv).value(), n_ctx).value();
  auto s = engine.NewSequence(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

const std::vector<int32_t> kText = {1, 403, 407, 261, 378, 446, 281, 284, 306, 414, 263, 304};

TEST(Embed, UnitLengthAndTheSameInAnyChunks) {
  const auto model = Stories();
  auto engine = Engine::Create(*model, {.n_threads = 2, .max_batch_tokens = 64}).value();
  auto whole = Fresh(*engine, 64, 64);
  const std::vector<float> a = engine->Embed(*whole, kText).value();
  ASSERT_EQ(a.size(), static_cast<size_t>(model->hparams().n_embd));
  double norm = 0;
  for (float v : a) norm += static_cast<double>(v) * v;
  EXPECT_NEAR(norm, 1.0, 1e-5);
  auto chunked = Fresh(*engine, 64, 5);
  const std::vector<float> b = engine->Embed(*chunked, kText).value();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << i;
  // Another text, another embedding.
  auto other = Fresh(*engine, 64, 64);
  const std::vector<float> c =
      engine->Embed(*other, std::vector<int32_t>(kText.begin(), kText.begin() + 4)).value();
  double cosine = 0;
  for (size_t i = 0; i < a.size(); ++i) cosine += static_cast<double>(a[i]) * c[i];
  EXPECT_LT(cosine, 0.999);
  // A sequence that has been fed, or evicts, is refused.
  EXPECT_FALSE(engine->Embed(*whole, kText).ok());
  auto evicting = Fresh(*engine, 64, 64, "local:recent=4");
  EXPECT_FALSE(engine->Embed(*evicting, kText).ok());
}

TEST(Embed, OneTokensEmbeddingIsTheDirectionOfItsLogits) {
  const auto model = Stories();
  auto engine = Engine::Create(*model, {.n_threads = 1, .max_batch_tokens = 8}).value();
  const std::vector<int32_t> one = {403};
  auto embedded = Fresh(*engine, 8, 8);
  const std::vector<float> e = engine->Embed(*embedded, one).value();
  auto scored = Fresh(*engine, 8, 8);
  ASSERT_TRUE(engine->Eval(*scored, one).ok());
  const std::span<const float> logits = scored->last_logits();
  const gguf::TensorInfo* w = model->file().FindTensor("output.weight");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->type, TensorType::kF32);
  const size_t n_embd = e.size(), n_vocab = logits.size();
  double dot = 0, we_norm = 0, logit_norm = 0;
  for (size_t r = 0; r < n_vocab; ++r) {
    double we = 0;
    for (size_t i = 0; i < n_embd; ++i) {
      float wi;
      std::memcpy(&wi, w->data + (r * n_embd + i) * sizeof(float), sizeof wi);
      we += static_cast<double>(wi) * e[i];
    }
    dot += we * logits[r];
    we_norm += we * we;
    logit_norm += static_cast<double>(logits[r]) * logits[r];
  }
  EXPECT_NEAR(dot / std::sqrt(we_norm * logit_norm), 1.0, 1e-5);
}

}  // namespace
}  // namespace h2o
