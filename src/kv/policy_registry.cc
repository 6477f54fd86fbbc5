// The table of policies. Each descriptor lives beside its policy's class.
#include "kv/policy_registry.h"

#include <vector>

#include <fmt/format.h>

namespace h2o {

extern const PolicyDescriptor kFullPolicyDescriptor;    // kv/kv_policy.cc
extern const PolicyDescriptor kLocalPolicyDescriptor;   // kv/policies.cc
extern const PolicyDescriptor kSinkPolicyDescriptor;    // kv/policies.cc
extern const PolicyDescriptor kH2oPolicyDescriptor;     // kv/policies.cc
extern const PolicyDescriptor kH2onlyPolicyDescriptor;  // kv/policies.cc
extern const PolicyDescriptor kTovaPolicyDescriptor;    // kv/policies.cc
extern const PolicyDescriptor kRandomPolicyDescriptor;  // kv/policies.cc
extern const PolicyDescriptor kSnapKvPolicyDescriptor;  // kv/snapkv.cc

namespace {

const PolicyDescriptor* const kRegistry[] = {
    &kFullPolicyDescriptor,   &kLocalPolicyDescriptor, &kSinkPolicyDescriptor,
    &kH2oPolicyDescriptor,    &kH2onlyPolicyDescriptor, &kTovaPolicyDescriptor,
    &kRandomPolicyDescriptor, &kSnapKvPolicyDescriptor,
};

}  // namespace

std::span<const PolicyDescriptor* const> Policies() { return kRegistry; }

const PolicyDescriptor* FindPolicy(std::string_view name) {
  for (const PolicyDescriptor* p : kRegistry) {
    if (name == p->name) return p;
  }
  return nullptr;
}

std::string PolicyNames() {
  std::string names;
  for (const PolicyDescriptor* p : kRegistry) names.append(names.empty() ? "" : ", ").append(p->name);
  return names;
}

Status UnknownPolicy(std::string_view name) {
  return Status::Error(
      fmt::format("unknown KV policy '{}' (expected one of: {})", name, PolicyNames()));
}

const PolicyDescriptor& PolicyOf(std::string_view name) {
  const PolicyDescriptor* p = FindPolicy(name);
  H2O_CHECK(p != nullptr && "PolicyOf: a policy name not from ParseKvSpec");
  return *p;
}

bool PolicyEvicts(std::string_view name) { return PolicyOf(name).evicts; }

Status CheckPosShift(std::string_view policy) {
  const PolicyDescriptor* p = FindPolicy(policy);
  if (p != nullptr && p->pos_shift) return Status::Ok();
  std::vector<std::string_view> shifting;
  for (const PolicyDescriptor* d : kRegistry) {
    if (d->pos_shift) shifting.push_back(d->name);
  }
  std::string names;  // "a", "a and b", "a, b and c"
  for (size_t i = 0; i < shifting.size(); ++i) {
    names.append(i == 0 ? "" : i + 1 == shifting.size() ? " and " : ", ").append(shifting[i]);
  }
  return Status::Error(
      fmt::format("--kv-pos-shift applies to the {} policies, not '{}'", names, policy));
}

}  // namespace h2o
