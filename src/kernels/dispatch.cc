#include "kernels/dispatch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/status.h"
#include "kernels/simd.h"

#if defined(H2O_KERNELS_X86_SIMD)
#include <cpuid.h>
#endif

namespace h2o::kernels {

const TypeKernels& KernelTable::For(TensorType type) const {
  switch (type) {
    case TensorType::kF32:
      return f32;
    case TensorType::kF16:
      return f16;
    case TensorType::kBF16:
      return bf16;
    case TensorType::kQ8_0:
      return q8_0;
    case TensorType::kQ4_0:
      return q4_0;
    case TensorType::kQ4_1:
      return q4_1;
    case TensorType::kQ5_0:
      return q5_0;
    case TensorType::kQ5_1:
      return q5_1;
    case TensorType::kQ2_K:
      return q2_k;
    case TensorType::kQ3_K:
      return q3_k;
    case TensorType::kQ4_K:
      return q4_k;
    case TensorType::kQ5_K:
      return q5_k;
    case TensorType::kQ6_K:
      return q6_k;
    default:
      break;
  }
  CheckFailed("KernelTable::For: a tensor type h2o cannot run", __FILE__, __LINE__);
}

std::string DescribeMatrixKernel(const KernelTable& table, TensorType type) {
  const char* kind = table.For(type).gemm_kind;
  return kind != nullptr ? kind : "row dots (scalar reference)";
}

std::vector<std::string> DescribeMatrixKernels(const KernelTable& table) {
  std::vector<std::string> kinds, lines;
  for (TensorType type : RunnableTypes()) {
    const std::string words = DescribeMatrixKernel(table, type);
    size_t i = 0;
    while (i < kinds.size() && kinds[i] != words) ++i;
    const std::string name(TraitsOf(type).name);
    if (i == kinds.size()) {
      kinds.push_back(words);
      lines.push_back(name);
    } else {
      lines[i] += ", " + name;
    }
  }
  for (size_t i = 0; i < lines.size(); ++i) lines[i] += ": " + kinds[i];
  return lines;
}

const KvRowKernels& KernelTable::KvFor(TensorType type) const {
  switch (type) {
    case TensorType::kF32:
      return kv_f32;
    case TensorType::kF16:
      return kv_f16;
    case TensorType::kBF16:
      return kv_derived.bf16;
    case TensorType::kQ8_0:
      return kv_derived.q8_0;
    case TensorType::kQ4_0:
      return kv_derived.q4_0;
    case TensorType::kQ4_1:
      return kv_derived.q4_1;
    case TensorType::kQ5_0:
      return kv_derived.q5_0;
    case TensorType::kQ5_1:
      return kv_derived.q5_1;
    default:
      break;
  }
  CheckFailed("KernelTable::KvFor: not a KV row type (KvRowTypes)", __FILE__, __LINE__);
}

std::span<const TensorType> KvRowTypes() {
  static constexpr TensorType kTypes[] = {TensorType::kF32,  TensorType::kF16,  TensorType::kBF16,
                                          TensorType::kQ8_0, TensorType::kQ4_0, TensorType::kQ4_1,
                                          TensorType::kQ5_0, TensorType::kQ5_1};
  return kTypes;
}

bool IsKvRowType(TensorType type) {
  for (TensorType t : KvRowTypes()) {
    if (t == type) return true;
  }
  return false;
}

#if defined(H2O_KERNELS_X86_SIMD)
namespace {

// CPUID leaf 1, ECX bit 29. __builtin_cpu_supports has no portable name for
// it (clang 14 lacks "f16c"); the AVX state check is already in "avx2".
bool CpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}

}  // namespace

// __builtin_cpu_supports reports AVX and AVX-512 features only when the OS
// saves their registers (XCR0), so no separate XGETBV check is needed.
bool CpuHasAvx2() {
  static const bool has =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && CpuHasF16c();
  return has;
}

bool CpuHasAvx512() {
  static const bool has = CpuHasAvx2() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return has;
}
#else
bool CpuHasAvx2() { return false; }
bool CpuHasAvx512() { return false; }
#endif

std::vector<const KernelTable*> AvailableKernels() {
  // SIMD backends go in front of the reference, each guarded by a compile
  // flag (was it built?) and a CPUID check (can this machine run it?).
  std::vector<const KernelTable*> tables;
#if defined(H2O_KERNELS_X86_SIMD)
  if (CpuHasAvx512()) tables.push_back(&Avx512Kernels());
  if (CpuHasAvx2()) tables.push_back(&Avx2Kernels());
#endif
  tables.push_back(&RefKernels());
  return tables;
}

const KernelTable& DefaultKernels() {
  // The best available: AVX-512 where the CPU has it. Decode is memory-bound
  // and runs the same there, but the matrix-matrix tiles (prefill, batched
  // decode) are 1.3-1.5x faster than AVX2's on a Sapphire Rapids VM
  // (BENCHMARKS.md). Kernel tests loop over AvailableKernels(), so every
  // table is tested wherever the CPU has it.
  return *AvailableKernels().front();
}

const KernelTable& SelectKernels(const char* env_value) {
  const std::vector<const KernelTable*> available = AvailableKernels();
  if (env_value == nullptr || env_value[0] == '\0' || std::strcmp(env_value, "auto") == 0) {
    return DefaultKernels();
  }
  for (const KernelTable* table : available) {
    if (std::strcmp(table->name, env_value) == 0) return *table;
  }
  std::fprintf(stderr, "h2o: H2O_KERNELS=%s is not an available kernel backend; using %s\n",
               env_value, DefaultKernels().name);
  return DefaultKernels();
}

const KernelTable& ActiveKernels() {
  static const KernelTable& active = SelectKernels(std::getenv("H2O_KERNELS"));
  return active;
}

}  // namespace h2o::kernels
