// Every GGML type id of ggml.h (llama.cpp b7847) with its block geometry,
// written here from ggml-common.h's block structs (QK_K = 256), and which
// ids h2o runs.
#include "core/tensor_type.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace h2o {
namespace {

struct Expected {
  uint32_t id;
  const char* name;
  int64_t block_size;
  size_t block_bytes;
};

constexpr int64_t kQK = 256;
constexpr size_t kHalf = 2;

// sizeof(block_*) as ggml-common.h's static_asserts spell them.
const Expected kGgmlTypes[] = {
    {0, "f32", 1, 4},
    {1, "f16", 1, 2},
    {2, "q4_0", 32, kHalf + 32 / 2},
    {3, "q4_1", 32, 2 * kHalf + 32 / 2},
    {6, "q5_0", 32, kHalf + 4 + 32 / 2},
    {7, "q5_1", 32, 2 * kHalf + 4 + 32 / 2},
    {8, "q8_0", 32, kHalf + 32},
    {9, "q8_1", 32, 2 * kHalf + 32},
    {10, "q2_K", kQK, 2 * kHalf + kQK / 16 + kQK / 4},
    {11, "q3_K", kQK, kHalf + kQK / 4 + kQK / 8 + 12},
    {12, "q4_K", kQK, 2 * kHalf + 12 + kQK / 2},
    {13, "q5_K", kQK, 2 * kHalf + 12 + kQK / 2 + kQK / 8},
    {14, "q6_K", kQK, kHalf + kQK / 16 + 3 * kQK / 4},
    {15, "q8_K", kQK, 4 + kQK + kQK / 16 * 2},
    {16, "iq2_xxs", kQK, kHalf + kQK / 8 * 2},
    {17, "iq2_xs", kQK, kHalf + kQK / 8 * 2 + kQK / 32},
    {18, "iq3_xxs", kQK, kHalf + 3 * (kQK / 8)},
    {19, "iq1_s", kQK, kHalf + kQK / 8 + kQK / 16},
    {20, "iq4_nl", 32, kHalf + 32 / 2},
    {21, "iq3_s", kQK, kHalf + 13 * (kQK / 32) + kQK / 64},
    {22, "iq2_s", kQK, kHalf + kQK / 4 + kQK / 16},
    {23, "iq4_xs", kQK, kHalf + 2 + kQK / 64 + kQK / 2},
    {24, "i8", 1, 1},
    {25, "i16", 1, 2},
    {26, "i32", 1, 4},
    {27, "i64", 1, 8},
    {28, "f64", 1, 8},
    {29, "iq1_m", kQK, kQK / 8 + kQK / 16 + kQK / 32},
    {30, "bf16", 1, 2},
    {34, "tq1_0", kQK, kHalf + kQK / 64 + (kQK - 4 * kQK / 64) / 5},
    {35, "tq2_0", kQK, kHalf + kQK / 4},
    {39, "mxfp4", 32, 1 + 32 / 2},
};

const std::set<std::string> kRunnable = {"f32",  "f16",  "bf16", "q4_0", "q4_1", "q5_0", "q5_1",
                                         "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K"};

TEST(TensorTypeTest, EveryGgmlTypeHasItsBlockGeometry) {
  for (const Expected& e : kGgmlTypes) {
    const auto traits = GetTensorTypeTraits(e.id);
    ASSERT_TRUE(traits.has_value()) << e.name;
    EXPECT_EQ(traits->name, e.name);
    EXPECT_EQ(traits->block_size, e.block_size) << e.name;
    EXPECT_EQ(traits->block_bytes, e.block_bytes) << e.name;
    EXPECT_EQ(traits->runnable, kRunnable.count(e.name) == 1) << e.name;
    EXPECT_EQ(IsRunnable(static_cast<TensorType>(e.id)), traits->runnable) << e.name;
    EXPECT_EQ(GgmlTypeName(e.id), e.name);
  }
}

TEST(TensorTypeTest, RetiredAndUnknownIdsHaveNoTraits) {
  for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 40u, 1000u}) {
    EXPECT_FALSE(GetTensorTypeTraits(id).has_value()) << id;
    EXPECT_FALSE(IsRunnable(static_cast<TensorType>(id))) << id;
  }
  // Retired ids keep their names for error messages; never-defined ids have none.
  EXPECT_EQ(GgmlTypeName(4), "q4_2");
  EXPECT_EQ(GgmlTypeName(31), "q4_0_4_4");
  EXPECT_EQ(GgmlTypeName(38), "iq4_nl_8_8");
  EXPECT_EQ(GgmlTypeName(40), "");
}

TEST(TensorTypeTest, RunnableTypesParseAndNothingElseDoes) {
  std::set<std::string> listed;
  for (TensorType t : RunnableTypes()) {
    const std::string name(TraitsOf(t).name);
    listed.insert(name);
    EXPECT_EQ(ParseTensorType(name), t) << name;
  }
  EXPECT_EQ(listed, kRunnable);
  for (const char* name :
       {"iq2_xxs", "q8_K", "q8_1", "tq1_0", "mxfp4", "i32", "f64", "q4_k", "Q4_K", "q4_2", ""}) {
    EXPECT_FALSE(ParseTensorType(name).has_value()) << name;
  }
}

TEST(TensorTypeTest, CheckRunnableNamesTensorTypeAndWhatRuns) {
  EXPECT_TRUE(CheckRunnable("blk.0.attn_q.weight", TensorType::kQ4_K).ok());
  const Status s = CheckRunnable("blk.0.attn_q.weight", TensorType::kIQ2_XXS);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "tensor 'blk.0.attn_q.weight' has type iq2_xxs, which h2o cannot run (runs: f32, f16, "
            "bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K)");
  EXPECT_EQ(RunnableTypeNames(),
            "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K");
}

TEST(TensorTypeTest, RowBytesCountsWholeBlocks) {
  EXPECT_EQ(RowBytes(TensorType::kQ4_K, 2048), 8u * 144);
  EXPECT_EQ(RowBytes(TensorType::kQ6_K, 5632), 22u * 210);
  EXPECT_EQ(RowBytes(TensorType::kQ5_1, 64), 2u * 24);
  EXPECT_EQ(RowBytes(TensorType::kIQ2_XXS, 512), 2u * 66);
  EXPECT_EQ(RowBytes(TensorType::kF16, 7), 14u);
}

}  // namespace
}  // namespace h2o
