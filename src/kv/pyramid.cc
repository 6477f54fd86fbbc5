// PyramidKV's schedule (see pyramid.h for the formulas and the paper).
#include "kv/pyramid.h"

#include <algorithm>

#include "core/status.h"
#include "kv/policy_registry.h"

namespace h2o {

std::vector<int32_t> PyramidLayerBudgets(const KvPlan& plan, int32_t n_layer,
                                         std::span<const int32_t> layer_window) {
  if (plan.pyramid == 0) return {};
  H2O_CHECK(n_layer >= 1);
  H2O_CHECK(layer_window.empty() || layer_window.size() == static_cast<size_t>(n_layer));
  const PolicyDescriptor& policy = PolicyOf(plan.policy);
  H2O_CHECK(policy.pyramid_fixed != nullptr);
  // The part that scales and the part every layer keeps.
  const int64_t kept = plan.*policy.pyramid_fixed;
  const int64_t s = plan.budget - kept;
  std::vector<int32_t> global;  // layer indices, lowest first
  for (int32_t l = 0; l < n_layer; ++l) {
    if (layer_window.empty() || layer_window[l] <= 0) global.push_back(l);
  }
  std::vector<int32_t> budgets(n_layer, 0);
  const auto n = static_cast<int64_t>(global.size());
  if (n == 0) return budgets;
  const int64_t top = s == 0 ? 0 : std::max<int64_t>(1, s / plan.pyramid);
  const int64_t bottom = 2 * s - top;
  int64_t total = 0;
  std::vector<int64_t> part(n, s);
  for (int64_t i = 0; n > 1 && i < n; ++i) {
    part[i] = (bottom * (n - 1 - i) + top * i) / (n - 1);
  }
  for (int64_t p : part) total += p;
  for (int64_t i = 0; total < n * s; ++i, ++total) ++part[i];  // what the floors lost
  for (int64_t i = 0; i < n; ++i) budgets[global[i]] = static_cast<int32_t>(part[i] + kept);
  return budgets;
}

}  // namespace h2o
