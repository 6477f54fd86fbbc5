#include "kernels/dispatch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "kernels/ref.h"

namespace h2o::kernels {
namespace {

TEST(DispatchTest, ReferenceIsAlwaysAvailableAndLast) {
  const auto available = AvailableKernels();
  ASSERT_FALSE(available.empty());
  EXPECT_EQ(available.back(), &RefKernels());
  EXPECT_STREQ(RefKernels().name, "ref");
}

TEST(DispatchTest, SelectByName) {
  EXPECT_EQ(&SelectKernels("ref"), &RefKernels());
  const KernelTable* best = AvailableKernels().front();
  EXPECT_EQ(&SelectKernels(nullptr), best);
  EXPECT_EQ(&SelectKernels(""), best);
  EXPECT_EQ(&SelectKernels("auto"), best);
  EXPECT_EQ(&SelectKernels("no-such-backend"), best);  // warns, falls back
}

TEST(DispatchTest, ActiveKernelsFollowsEnvironmentAndIsStable) {
  const KernelTable& active = ActiveKernels();
  EXPECT_EQ(&ActiveKernels(), &active);
  const char* env = std::getenv("H2O_KERNELS");
  if (env != nullptr && std::strcmp(env, "ref") == 0) {
    EXPECT_EQ(&active, &RefKernels());
  } else {
    EXPECT_EQ(&active, &SelectKernels(env));
  }
}

TEST(DispatchTest, RefTableWiresEachTypeToItsKernels) {
  const KernelTable& t = RefKernels();
  EXPECT_EQ(t.For(TensorType::kF32).dot_row, &ref::DotRowF32);
  EXPECT_EQ(t.For(TensorType::kF16).dot_row, &ref::DotRowF16);
  EXPECT_EQ(t.For(TensorType::kBF16).dot_row, &ref::DotRowBF16);
  EXPECT_EQ(t.For(TensorType::kQ8_0).dot_row, &ref::DotRowQ8_0);
  EXPECT_EQ(t.For(TensorType::kQ4_0).dot_row, &ref::DotRowQ4_0);
  EXPECT_EQ(t.For(TensorType::kQ4_0).quantize_row, &ref::QuantizeRowQ4_0);
  EXPECT_EQ(t.For(TensorType::kQ8_0).dequantize_row, &ref::DequantizeRowQ8_0);
  EXPECT_EQ(t.rms_norm, &ref::RmsNorm);
  EXPECT_EQ(t.rope, &ref::RopeInPlace);
  EXPECT_EQ(t.softmax, &ref::SoftmaxInPlace);
  EXPECT_EQ(t.swiglu, &ref::SwiGluInPlace);
}

TEST(DispatchTest, UnsupportedTypeIsAnInvariantFailure) {
  EXPECT_DEATH(RefKernels().For(static_cast<TensorType>(3)), "internal check failed");
}

}  // namespace
}  // namespace h2o::kernels
