#include "kernels/dispatch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/ref.h"
#include "kernels/simd.h"

namespace h2o::kernels {
namespace {

TEST(DispatchTest, ReferenceIsAlwaysAvailableAndLast) {
  const auto available = AvailableKernels();
  ASSERT_FALSE(available.empty());
  EXPECT_EQ(available.back(), &RefKernels());
  EXPECT_STREQ(RefKernels().name, "ref");
}

// avx512, avx2, ref: each SIMD table listed exactly when CPUID allows it,
// best first, and selectable by name.
TEST(DispatchTest, SimdBackendsFollowCpuid) {
  std::vector<std::string> want;
  if (CpuHasAvx512()) want.push_back("avx512");
  if (CpuHasAvx2()) want.push_back("avx2");
  want.push_back("ref");
  std::vector<std::string> got;
  for (const KernelTable* table : AvailableKernels()) {
    got.push_back(table->name);
    EXPECT_EQ(&SelectKernels(table->name), table);
  }
#if defined(H2O_KERNELS_X86_SIMD)
  EXPECT_EQ(got, want);
#else
  EXPECT_EQ(got, std::vector<std::string>{"ref"});
#endif
  // AVX-512 machines always have AVX2, FMA and F16C.
  if (CpuHasAvx512()) {
    EXPECT_TRUE(CpuHasAvx2());
  }
}

TEST(DispatchTest, SelectByName) {
  EXPECT_EQ(&SelectKernels("ref"), &RefKernels());
  const KernelTable* best = &DefaultKernels();
#if defined(H2O_KERNELS_X86_SIMD)
  EXPECT_EQ(best, CpuHasAvx512() ? &Avx512Kernels()
                  : CpuHasAvx2() ? &Avx2Kernels()
                                 : &RefKernels());
#else
  EXPECT_EQ(best, &RefKernels());
#endif
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
  EXPECT_EQ(t.layer_norm, &ref::LayerNorm);
  EXPECT_EQ(t.geglu, &ref::GeGluInPlace);
  EXPECT_EQ(t.gelu, &ref::GeluInPlace);
  EXPECT_EQ(t.softcap, &ref::SoftcapInPlace);
}

// Every runnable type has all its row kernels in every table, and exactly
// the integer dot its activation format names.
TEST(DispatchTest, EveryRunnableTypeHasKernelsInEveryTable) {
  for (const KernelTable* table : AvailableKernels()) {
    for (TensorType type : RunnableTypes()) {
      const TypeKernels& tk = table->For(type);
      const std::string where = std::string(table->name) + " " + std::string(TraitsOf(type).name);
      EXPECT_NE(tk.quantize_row, nullptr) << where;
      EXPECT_NE(tk.dequantize_row, nullptr) << where;
      EXPECT_NE(tk.dot_row, nullptr) << where;
      const bool quantized = TraitsOf(type).block_size > 1;
      const bool super_block = TraitsOf(type).block_size == 256;
      EXPECT_EQ(tk.dot_row_q8 != nullptr, quantized && !super_block) << where;
      EXPECT_EQ(tk.dot_row_q8k != nullptr, super_block) << where;
    }
    EXPECT_NE(table->quantize_act, nullptr) << table->name;
    EXPECT_NE(table->quantize_act_k, nullptr) << table->name;
    EXPECT_NE(table->layer_norm, nullptr) << table->name;
    EXPECT_NE(table->geglu, nullptr) << table->name;
    EXPECT_NE(table->gelu, nullptr) << table->name;
    EXPECT_NE(table->softcap, nullptr) << table->name;
  }
}

// Every runnable type is named on exactly one line, beside the words its
// entry gives, and a table whose types share one kernel prints one line.
TEST(DispatchTest, MatrixKernelLinesNameEveryTypeOnce) {
  for (const KernelTable* table : AvailableKernels()) {
    const std::vector<std::string> lines = DescribeMatrixKernels(*table);
    for (TensorType type : RunnableTypes()) {
      const std::string name(TraitsOf(type).name);
      const std::string kind = DescribeMatrixKernel(*table, type);
      int found = 0;
      for (const std::string& line : lines) {
        const size_t colon = line.find(": ");
        ASSERT_NE(colon, std::string::npos) << line;
        const std::string names = ", " + line.substr(0, colon) + ",";
        if (names.find(", " + name + ",") == std::string::npos) continue;
        ++found;
        EXPECT_EQ(line.substr(colon + 2), kind) << table->name << " " << name;
      }
      EXPECT_EQ(found, 1) << table->name << " " << name;
    }
  }
  EXPECT_EQ(DescribeMatrixKernels(RefKernels()).size(), 1u);
}

// A type h2o cannot run (or an id GGML retired) never reaches a kernel:
// asking for one is a broken invariant, not a user error.
TEST(DispatchTest, TypeThatCannotRunIsAnInvariantFailure) {
  EXPECT_DEATH(RefKernels().For(TensorType::kIQ2_XXS), "internal check failed");
  EXPECT_DEATH(RefKernels().For(static_cast<TensorType>(4)), "internal check failed");
}

}  // namespace
}  // namespace h2o::kernels
