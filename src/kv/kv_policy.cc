#include "kv/kv_policy.h"

#include "core/status.h"
#include "kv/policy_registry.h"

namespace h2o {

FullPolicy::FullPolicy(int32_t n_ctx) : n_ctx_(n_ctx) { H2O_CHECK(n_ctx >= 1); }

int32_t FullPolicy::ChooseVictim(const HeadMetadata&) {
  // The cache never runs over a full policy's budget (budget == capacity).
  H2O_CHECK(false && "full policy asked to evict");
  return -1;
}

extern const PolicyDescriptor kFullPolicyDescriptor{
    .name = "full",
    .keys = {},
    .evicts = false,
    .describe = [](const KvPlan&) { return std::string("full"); },
    .make = [](const KvPlan&, int32_t n_ctx) -> std::unique_ptr<EvictionPolicy> {
      return std::make_unique<FullPolicy>(n_ctx);
    },
};

}  // namespace h2o
