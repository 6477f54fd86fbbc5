// The KV row types by name, the head sizes they need, their names and bytes.
#include "kv/kv_types.h"

#include <gtest/gtest.h>

#include <string>

namespace h2o {
namespace {

TEST(KvTypes, ParsesTheKvRowTypesOnly) {
  for (const char* name : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1"}) {
    Result<TensorType> t = ParseKvRowType(name);
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_EQ(TraitsOf(*t).name, name);
  }
  for (const char* name : {"q4_K", "q8_1", "iq2_xxs", "f64", "", "Q8_0"}) {
    const Result<TensorType> t = ParseKvRowType(name);
    ASSERT_FALSE(t.ok()) << name;
    EXPECT_EQ(t.status().message(),
              std::string("unknown KV cache type '") + name +
                  "' (valid: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1)");
  }
}

TEST(KvTypes, BlockTypesNeedWholeBlocksPerHead) {
  EXPECT_TRUE(CheckKvTypes({TensorType::kQ8_0, TensorType::kQ4_0}, 64).ok());
  EXPECT_TRUE(CheckKvTypes({TensorType::kF16, TensorType::kBF16}, 8).ok());
  const Status s = CheckKvTypes({TensorType::kF16, TensorType::kQ5_1}, 48);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "V cache type q5_1 needs heads whose size is a multiple of 32; this model's heads "
            "have 48 (use f16, bf16 or f32)");
  EXPECT_FALSE(CheckKvTypes({TensorType::kQ4_K, TensorType::kF16}, 256).ok());
}

TEST(KvTypes, NamesAndBytes) {
  EXPECT_EQ((KvTypes{TensorType::kQ8_0, TensorType::kQ8_0}).Name(), "q8_0");
  EXPECT_EQ((KvTypes{TensorType::kQ8_0, TensorType::kF16}).Name(), "K q8_0, V f16");
  // q8_0: 34 bytes per 32 values; q4_1: 20; f16: 2 per value.
  EXPECT_EQ((KvTypes{TensorType::kQ8_0, TensorType::kQ4_1}).TokenBytes(64), 2u * 34 + 2u * 20);
  EXPECT_EQ((KvTypes{}).TokenBytes(64), 2u * 64 * 2);
}

}  // namespace
}  // namespace h2o
