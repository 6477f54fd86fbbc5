// Every eviction policy as data: one PolicyDescriptor per policy says its
// name, its --kv keys, how a --budget sweep splits a budget among them,
// whether --kv-pos-shift applies, what a pyramid scales, the checks of a
// resolved plan, and how to describe and build it. The --kv parser
// (kv/kv_spec.h), the budget sweep (kv/kv_budget.h), PyramidKV's schedule
// and the session checks read the descriptor; nothing else compares
// policy names.
//
// Adding a policy: its class and its descriptor in one file (the
// descriptor named k<Name>PolicyDescriptor), one row in the table of
// policy_registry.cc, its tests.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "kv/kv_policy.h"
#include "kv/kv_spec.h"

namespace h2o {

// What a key's value is (kv_spec.h lists which key takes which).
enum class KvValueKind {
  kTokens,    // a token count or a percentage of the prompt length
  kInteger,   // seed, kernel, pyramid: a non-negative integer, never a percentage
  kWord,      // one of KvKey::words
  kFraction,  // a decimal number like 0.9 (decay; its range is checked by key)
};

struct KvKey {
  const char* name;
  bool required;
  uint64_t default_value;  // kTokens/kInteger keys: used when not required and absent
  KvValueKind kind = KvValueKind::kTokens;
  std::span<const std::string_view> words = {};  // kWord: the valid values
};

// How `--budget B` becomes this policy's keys (kv/kv_budget.h's table).
struct BudgetSplit {
  enum class Kind {
    kNone,        // the policy has no budget (full): it runs once, as the reference
    kWhole,       // first = B
    kHalves,      // first = floor(B/2), second = the rest; a percentage halves exactly
    kAfterFixed,  // first = fixed tokens, second = B - fixed; a percentage: second = B
                  // and the fixed tokens on top (a percentage cannot absorb a count)
  };
  Kind kind = Kind::kNone;
  const char* first = nullptr;
  const char* second = nullptr;
  int32_t fixed = 0;  // kAfterFixed
};

struct PolicyDescriptor {
  const char* name = nullptr;  // as written in --kv specs
  std::span<const KvKey> keys = {};
  bool evicts = true;      // false: full, whose budget is the context
  bool pos_shift = false;  // --kv-pos-shift re-rotates its keys by rank
  BudgetSplit split = {};
  // With the pyramid key: the part of a resolved plan every layer keeps
  // (kv/pyramid.h scales the rest); nullptr where the policy has no pyramid.
  int32_t KvPlan::*pyramid_fixed = nullptr;
  // A resolved plan's policy-specific check, after the budget's (nullptr:
  // none). spec_text is the spec as given, prompt_note " for a N-token
  // prompt" where percentages were resolved, else empty.
  Status (*check)(const KvPlan& plan, std::string_view spec_text,
                  std::string_view prompt_note) = nullptr;
  // KvPlan::Describe's text for this policy.
  std::string (*describe)(const KvPlan& plan) = nullptr;
  // The policy of a resolved plan (MakePolicy).
  std::unique_ptr<EvictionPolicy> (*make)(const KvPlan& plan, int32_t n_ctx) = nullptr;
};

// Every policy, in the order help and errors list them.
std::span<const PolicyDescriptor* const> Policies();

// The descriptor named `name`; nullptr if there is none.
const PolicyDescriptor* FindPolicy(std::string_view name);

// "full, local, ...": the names, for error messages.
std::string PolicyNames();

// "unknown KV policy 'NAME' (expected one of: full, local, ...)".
Status UnknownPolicy(std::string_view name);

// The descriptor of a plan's (or spec's) policy, which must exist.
const PolicyDescriptor& PolicyOf(std::string_view name);

// Whether the named policy evicts (every policy but full). Requires a
// known name.
bool PolicyEvicts(std::string_view name);

// Ok where --kv-pos-shift applies to the policy, else the one-line error
// that names the policies it applies to.
Status CheckPosShift(std::string_view policy);

}  // namespace h2o
