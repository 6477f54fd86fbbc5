// CheckKvCacheFits against hand-computed cache sizes, and a context that
// no machine holds refused through Session::Create before allocating.
#include "runtime/kv_fit.h"

#include <gtest/gtest.h>

#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/session.h"
#include "test_data.h"

namespace h2o {
namespace {

KvCacheConfig Full(int32_t n_layer, int32_t n_head_kv, int32_t head_dim, int32_t n_ctx) {
  KvCacheConfig c;
  c.n_layer = n_layer;
  c.n_head_kv = n_head_kv;
  c.head_dim = head_dim;
  c.budget = n_ctx;
  c.capacity = n_ctx;
  c.types = {TensorType::kF16, TensorType::kF16};
  return c;
}

TEST(KvFit, ExactlyTheCachesBytesFitAndOneLessDoesNot) {
  KvPlan plan;
  const auto policy = MakePolicy(plan, 100);
  // 2 layers x 3 KV heads x 100 slots: f16 K and V rows of 8 (32 bytes)
  // and a position (4 bytes) per slot.
  const KvCacheConfig c = Full(2, 3, 8, 100);
  const uint64_t bytes = 2 * 3 * 100 * (32 + 4);
  ASSERT_EQ(KvCache::AllocatedBytesFor(c, *policy), bytes);
  EXPECT_TRUE(CheckKvCacheFits(c, *policy, bytes).ok());
  const Status s = CheckKvCacheFits(c, *policy, bytes - 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the KV cache (2 layers x 3 KV heads x up to 100 tokens of 8 f16 values"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("more than this machine's"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckKvCacheFits(c, *policy, 0).ok());  // unknown memory: not checked
}

TEST(KvFit, SizesPastSizeTAreRefusedNotWrapped) {
  KvPlan plan;
  const auto policy = MakePolicy(plan, 1);
  // 2^10 layers x 2^30 KV heads x (2^31 - 1) slots: 2^71 rows, which
  // size_t would wrap.
  const Status s = CheckKvCacheFits(Full(1 << 10, 1 << 30, 1 << 20, 2147483647), *policy, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs more than 4 EiB"), std::string::npos) << s.message();
}

TEST(KvFit, MachineMemoryIsKnownHere) {
  // Linux CI: /proc/meminfo is there, and any machine has a few MiB.
  EXPECT_GT(MachineMemoryBytes(), uint64_t{64} << 20);
}

TEST(KvFit, SessionRefusesAContextNoMachineHolds) {
  auto model = Model::Load(testing::ModelPath());
  ASSERT_TRUE(model.ok());
  SessionOptions options;
  // stories260K: 5 layers x 4 KV heads x 2^31 - 1 slots x (32 + 8) bytes,
  // about 1.6 TiB.
  options.n_ctx = 2147483647;
  options.max_chunk = 1;
  auto session = Session::Create(**model, options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("lower the context size or set a KV budget"), std::string::npos)
      << session.status().message();
  // The same context with a budget allocates only the budget.
  auto spec = ParseKvSpec("h2o:heavy=16,recent=16");
  ASSERT_TRUE(spec.ok());
  auto plan = ResolveKvSpec(*spec, std::nullopt);
  ASSERT_TRUE(plan.ok());
  options.kv = *plan;
  EXPECT_TRUE(Session::Create(**model, options).ok());
}

}  // namespace
}  // namespace h2o
