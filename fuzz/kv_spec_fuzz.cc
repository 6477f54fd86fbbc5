// The --kv text (CLI and the server's per-request "kv" field): parse,
// resolve against a prompt length, split lists, expand sweeps. A resolved
// plan's Describe() is itself a spec, which must parse and resolve to the
// same plan.
//
// Input: "SPEC_OR_LIST\nBUDGET_LIST\nPROMPT_LEN"; missing lines are empty
// budgets and an unknown prompt length.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "fuzz/fields.h"
#include "kv/kv_budget.h"
#include "kv/kv_spec.h"

namespace {

void Fail(const std::string& what) {
  fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

bool SamePlan(const h2o::KvPlan& a, const h2o::KvPlan& b) {
  return a.policy == b.policy && a.heavy == b.heavy && a.recent == b.recent &&
         a.sinks == b.sinks && a.k == b.k && a.seed == b.seed && a.budget == b.budget &&
         a.score == b.score && a.decay == b.decay && a.window == b.window &&
         a.kernel == b.kernel && a.pyramid == b.pyramid;
}

void ResolveAndRecheck(const h2o::KvSpec& spec, std::optional<int64_t> prompt_len) {
  (void)h2o::KvSpecUsesPercent(spec);
  (void)h2o::KvSpecWarnings(spec, prompt_len);
  auto plan = h2o::ResolveKvSpec(spec, prompt_len);
  if (!plan.ok()) return;
  const std::string described = plan.value().Describe();
  auto again = h2o::ParseKvSpec(described);
  if (!again.ok()) Fail("Describe() does not parse: " + described);
  auto replan = h2o::ResolveKvSpec(again.value(), std::nullopt);
  if (!replan.ok() || !SamePlan(plan.value(), replan.value())) {
    Fail("Describe() resolves differently: " + described);
  }
  (void)h2o::MakePolicy(plan.value(), 4096);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto fields =
      h2o::fuzz::SplitFields({reinterpret_cast<const char*>(data), size}, '\n');
  const std::string text(fields[0]);
  const std::string budgets(fields.size() > 1 ? fields[1] : "");
  std::optional<int64_t> prompt_len;
  if (fields.size() > 2) {
    int64_t n = 0;
    const std::string_view f = fields[2];
    if (std::from_chars(f.data(), f.data() + f.size(), n).ec == std::errc()) prompt_len = n;
  }

  auto spec = h2o::ParseKvSpec(text);
  if (spec.ok()) ResolveAndRecheck(spec.value(), prompt_len);

  auto list = h2o::SplitKvSpecList(text);
  if (list.ok()) {
    for (const std::string& one : list.value()) {
      auto s = h2o::ParseKvSpec(one);
      if (s.ok()) ResolveAndRecheck(s.value(), prompt_len);
    }
  }
  (void)h2o::ExpandKvSweep(text, budgets);
  (void)h2o::ParseKvBudget(budgets);
  (void)h2o::KvSpecAtBudget(text, budgets);
  return 0;
}
