// The rotary embedding's per-pair frequencies and magnitude for each scaling
// scheme, against values worked out by hand from llama.cpp's formulas, and
// the GGUF keys they are read from.
#include "model/rope.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "model/hparams.h"

namespace h2o {
namespace {

HParams EightDims() {
  HParams hp;
  hp.n_rot = 8;
  hp.head_dim = 8;
  hp.rope_freq_base = 10000.0f;
  hp.n_ctx_train = 64;
  hp.n_ctx_orig = 64;
  return hp;
}

TEST(RotaryEmbedding, PlainIsBasePowers) {
  // 10000^(-2i/8) = 1, 0.1, 0.01, 0.001.
  const RotaryEmbedding rope(EightDims(), {});
  ASSERT_EQ(rope.inv_freq().size(), 4u);
  const double want[] = {1.0, 0.1, 0.01, 0.001};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(rope.inv_freq()[i], want[i], 1e-15 * (1 + want[i]));
  EXPECT_EQ(rope.mscale(), 1.0f);
  EXPECT_EQ(rope.params().n_rot, 8);
}

TEST(RotaryEmbedding, LinearScalesEveryPair) {
  HParams hp = EightDims();
  hp.rope_freq_scale = 0.25f;
  const RotaryEmbedding rope(hp, {});
  const double want[] = {0.25, 0.025, 0.0025, 0.00025};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(rope.inv_freq()[i], want[i], 1e-15);
  EXPECT_EQ(rope.mscale(), 1.0f);
  // "none" ignores the factor, as llama.cpp does.
  hp.rope_scaling = RopeScalingType::kNone;
  EXPECT_NEAR(RotaryEmbedding(hp, {}).inv_freq()[1], 0.1, 1e-15);
}

TEST(RotaryEmbedding, FrequencyFactorsDivide) {
  const std::vector<float> factors = {1.0f, 2.0f, 4.0f, 8.0f};
  const RotaryEmbedding rope(EightDims(), factors);
  const double want[] = {1.0, 0.05, 0.0025, 0.000125};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(rope.inv_freq()[i], want[i], 1e-15);
}

TEST(RotaryEmbedding, YarnRampsBetweenCorrectionDims) {
  // n_rot 8, base 1e4, n_ctx_orig 64, factor 4 (freq_scale 0.25):
  //   corr(32) = 8 ln(64 / (32 * 2 pi)) / (2 ln 1e4) = -0.497 -> floor -1 -> low 0
  //   corr(1)  = 8 ln(64 / (2 pi)) / (2 ln 1e4)      =  1.008 -> ceil 2  -> high 2
  // ramp r_i = 1 - clamp(i / 2) = 1, 0.5, 0, 0, so
  //   inv_freq = base_i (0.25 (1 - r) + r) = 1, 0.1 * 0.625, 0.01 * 0.25, 0.001 * 0.25
  // and mscale = 1 + 0.1 ln 4.
  HParams hp = EightDims();
  hp.rope_scaling = RopeScalingType::kYarn;
  hp.rope_freq_scale = 0.25f;
  const RotaryEmbedding rope(hp, {});
  const double want[] = {1.0, 0.0625, 0.0025, 0.00025};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(rope.inv_freq()[i], want[i], 1e-15);
  EXPECT_NEAR(rope.mscale(), 1.0 + 0.1 * std::log(4.0), 1e-7);
  // llama.cpp's attention factor multiplies on top.
  hp.rope_attn_factor = 0.5f;
  EXPECT_NEAR(RotaryEmbedding(hp, {}).mscale(), 0.5 * (1.0 + 0.1 * std::log(4.0)), 1e-7);
}

TEST(RotaryEmbedding, YarnWithoutExtensionIsPlain) {
  HParams hp = EightDims();
  hp.rope_scaling = RopeScalingType::kYarn;  // factor 1: nothing to interpolate
  const RotaryEmbedding rope(hp, {});
  EXPECT_NEAR(rope.inv_freq()[3], 0.001, 1e-15);
  EXPECT_EQ(rope.mscale(), 1.0f);
}

// A GGUF holding only llama hyperparameters: 64-dim embedding, 4 heads.
class RopeKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    w_.SetString("general.architecture", "llama");
    w_.SetU32("llama.context_length", 4096);
    w_.SetU32("llama.embedding_length", 64);
    w_.SetU32("llama.block_count", 1);
    w_.SetU32("llama.feed_forward_length", 128);
    w_.SetU32("llama.attention.head_count", 4);
    w_.SetF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  }
  Result<HParams> Read() {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("h2o_rope_keys_" + std::to_string(::getpid()) + ".gguf"))
                                 .string();
    const Status written = w_.Write(path);
    EXPECT_TRUE(written.ok()) << written.message();
    auto file = gguf::File::Open(path);
    std::filesystem::remove(path);
    if (!file.ok()) return file.status();
    return ReadHParams(**file);
  }
  gguf::Writer w_;
};

TEST_F(RopeKeys, DefaultsAreLinearByOneOverTheTrainingContext) {
  auto hp = Read();
  ASSERT_TRUE(hp.ok()) << hp.status().message();
  EXPECT_EQ(hp->head_dim, 16);
  EXPECT_EQ(hp->n_rot, 16);
  EXPECT_EQ(hp->rope_scaling, RopeScalingType::kLinear);
  EXPECT_EQ(hp->rope_freq_scale, 1.0f);
  EXPECT_EQ(hp->n_ctx_orig, 4096);
}

TEST_F(RopeKeys, KeyLengthSetsTheHeadWidth) {
  // Llama 3.2 3B style: heads wider than n_embd / n_head.
  w_.SetU32("llama.attention.key_length", 32);
  w_.SetU32("llama.attention.value_length", 32);
  w_.SetU32("llama.rope.dimension_count", 32);
  auto hp = Read();
  ASSERT_TRUE(hp.ok()) << hp.status().message();
  EXPECT_EQ(hp->head_dim, 32);
  EXPECT_EQ(hp->q_dim(), 128);
}

TEST_F(RopeKeys, DifferentValueLengthIsAnError) {
  w_.SetU32("llama.attention.key_length", 32);
  w_.SetU32("llama.attention.value_length", 16);
  auto hp = Read();
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("value_length 16 differs from key_length 32"),
            std::string::npos)
      << hp.status().message();
}

TEST_F(RopeKeys, YarnKeys) {
  w_.SetString("llama.rope.scaling.type", "yarn");
  w_.SetF32("llama.rope.scaling.factor", 4.0f);
  w_.SetU32("llama.rope.scaling.original_context_length", 1024);
  w_.SetF32("llama.rope.scaling.attn_factor", 0.75f);
  auto hp = Read();
  ASSERT_TRUE(hp.ok()) << hp.status().message();
  EXPECT_EQ(hp->rope_scaling, RopeScalingType::kYarn);
  EXPECT_EQ(hp->rope_freq_scale, 0.25f);
  EXPECT_EQ(hp->n_ctx_orig, 1024);
  EXPECT_EQ(hp->rope_attn_factor, 0.75f);
}

TEST_F(RopeKeys, OlderLinearKeyAndNone) {
  w_.SetF32("llama.rope.scale_linear", 2.0f);
  auto linear = Read();
  ASSERT_TRUE(linear.ok()) << linear.status().message();
  EXPECT_EQ(linear->rope_freq_scale, 0.5f);
  w_.SetString("llama.rope.scaling.type", "none");
  auto none = Read();
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->rope_freq_scale, 1.0f);
}

TEST_F(RopeKeys, UnknownScalingTypeIsNamed) {
  w_.SetString("llama.rope.scaling.type", "longrope");
  auto hp = Read();
  ASSERT_FALSE(hp.ok());
  EXPECT_NE(hp.status().message().find("rope.scaling.type 'longrope' is not supported"),
            std::string::npos)
      << hp.status().message();
}

TEST_F(RopeKeys, NegativeFactorIsAnError) {
  w_.SetF32("llama.rope.scaling.factor", -2.0f);
  EXPECT_FALSE(Read().ok());
}

}  // namespace
}  // namespace h2o
