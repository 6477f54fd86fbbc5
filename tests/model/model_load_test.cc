// Loading: hyperparameters of the bundled model and clear errors for
// models this engine cannot run.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

TEST(ModelLoad, Stories260KHyperparameters) {
  auto m = Model::Load(testing::ModelPath());
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HParams& hp = (*m)->hparams();
  EXPECT_EQ(hp.arch, "llama");
  EXPECT_EQ(hp.n_vocab, 512);
  EXPECT_EQ(hp.n_embd, 64);
  EXPECT_EQ(hp.n_layer, 5);
  EXPECT_EQ(hp.n_head, 8);
  EXPECT_EQ(hp.n_head_kv, 4);
  EXPECT_EQ(hp.head_dim, 8);
  EXPECT_EQ(hp.n_ff, 172);
  EXPECT_EQ(hp.n_ctx_train, 512);
  EXPECT_NEAR(hp.norm_eps, 1e-5f, 1e-9f);
  EXPECT_EQ(hp.rope_mode, kernels::RopeMode::kNormal);
  EXPECT_FALSE((*m)->weights().tied_output);
}

// Rewrites the bundled model with one change, for error cases.
class ModifiedModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("h2o_model_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Copies every key (except skip_key) and tensor (except skip_tensor),
  // then applies edit.
  std::string Write(const std::string& skip_key, const std::string& skip_tensor,
                    const std::function<void(gguf::Writer&)>& edit = {}) {
    auto src = gguf::File::Open(testing::ModelPath());
    EXPECT_TRUE(src.ok());
    gguf::Writer w;
    for (const auto& kv : (*src)->metadata()) {
      if (kv.key != skip_key) w.Set(kv.key, kv.value);
    }
    for (const auto& t : (*src)->tensors()) {
      if (t.name == skip_tensor) continue;
      EXPECT_TRUE(w.AddTensor(t.name, t.type, t.dims, t.data, t.nbytes).ok());
    }
    if (edit) edit(w);
    const std::string path = (dir_ / "m.gguf").string();
    EXPECT_TRUE(w.Write(path).ok());
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ModifiedModel, UnsupportedArchitectureIsNamed) {
  const auto path = Write("", "", [](gguf::Writer& w) { w.SetString("general.architecture", "mamba"); });
  auto m = Model::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message().rfind(path + ": ", 0), 0u) << m.status().message();
  EXPECT_NE(m.status().message().find("architecture 'mamba' is not supported"), std::string::npos);
}

TEST_F(ModifiedModel, MissingTensorIsNamed) {
  const auto path = Write("", "blk.3.ffn_up.weight");
  auto m = Model::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("missing tensor 'blk.3.ffn_up.weight'"), std::string::npos)
      << m.status().message();
}

TEST_F(ModifiedModel, MissingRequiredKeyIsNamed) {
  const auto path = Write("llama.block_count", "");
  auto m = Model::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("llama.block_count"), std::string::npos)
      << m.status().message();
}

TEST_F(ModifiedModel, WrongTensorShapeIsNamed) {
  const auto path = Write("llama.feed_forward_length", "", [](gguf::Writer& w) {
    w.SetU32("llama.feed_forward_length", 100);
  });
  auto m = Model::Load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("blk.0.ffn_gate.weight' has shape"), std::string::npos)
      << m.status().message();
}

TEST_F(ModifiedModel, TiedClassifierWhenOutputIsAbsent) {
  // stories260K's output.weight is a copy of its embedding, so dropping it
  // must not change the logits.
  const auto path = Write("", "output.weight");
  auto tied = Model::Load(path);
  auto untied = Model::Load(testing::ModelPath());
  ASSERT_TRUE(tied.ok() && untied.ok());
  EXPECT_TRUE((*tied)->weights().tied_output);
  auto a = Session::Create(**tied, {});
  auto b = Session::Create(**untied, {});
  const int32_t prompt[] = {1, 403, 407};
  ASSERT_TRUE((*a)->Eval(prompt).ok());
  ASSERT_TRUE((*b)->Eval(prompt).ok());
  const auto la = (*a)->last_logits();
  const auto lb = (*b)->last_logits();
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) EXPECT_EQ(la[i], lb[i]);
}

TEST(SessionErrors, ContextOverflowAndBadIdsAreRejected) {
  auto m = Model::Load(testing::ModelPath());
  ASSERT_TRUE(m.ok());
  SessionOptions o;
  o.n_ctx = 4;
  auto s = Session::Create(**m, o);
  ASSERT_TRUE(s.ok());
  const int32_t bad[] = {1, 512};
  Status st = (*s)->Eval(bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("token id 512 is out of range"), std::string::npos);
  EXPECT_EQ((*s)->n_past(), 0);
  const int32_t five[] = {1, 2, 3, 4, 5};
  st = (*s)->Eval(five);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("context"), std::string::npos);
  EXPECT_EQ((*s)->n_past(), 0);
}

}  // namespace
}  // namespace h2o
