// Policy-at-budget: the paper's way of comparing KV policies (Figure 4) is
// one total budget per run, split the same way for every run of a policy.
// This turns a bare policy name and a budget ("h2o", "20%") into the --kv
// spec that runs it ("h2o:heavy=10%,recent=10%"), and a policy list times a
// budget list into the grid a sweep runs. Pure and thread-safe.
//
// The split per policy (B = the budget), as each policy's descriptor
// states it (BudgetSplit, kv/policy_registry.h):
//   full    ignores B (the reference; it appears once in a grid)
//   local   recent = B
//   h2o     heavy = recent = B/2 (absolute: heavy = floor(B/2), recent = the rest)
//   sink    sinks = 4, recent = B - 4 (absolute); with a percentage, recent = B%
//           plus the 4 sinks (4 tokens over the budget: a percentage cannot
//           absorb a token count before the sequence length is known)
//   h2only  heavy = B
//   tova    k = B
//   random  k = B (no recent window, seed 0)
//   snapkv  budget = B (its default observation window)
// Percent halves stay exact ("12.5%" gives "6.25%" each); each half is
// floored when it resolves, so h2o at 10% of 515 tokens keeps 25 + 25.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace h2o {

// One budget of a sweep: a token count ("64") or a percentage of the
// sequence length ("10%", "12.5%").
struct KvBudget {
  std::string text;  // as written, trimmed: the label a report shows
  bool percent = false;
  double value = 0;  // 10 for "10%", 64 for "64"
  // Exact form, value == digits / 10^scale (scale > 0 only for percentages).
  uint64_t digits = 0;
  int32_t scale = 0;
};

// Parses a budget: a positive integer token count, or a positive percentage
// of at most 100%. Errors name the text and the valid forms.
Result<KvBudget> ParseKvBudget(std::string_view text);

// The --kv spec of `policy` at `budget` (split as in the table above).
// Errors: unknown policy (naming the valid ones), a bad budget, or a
// budget too small to split (sink at an absolute budget of 4 or less).
Result<std::string> KvSpecAtBudget(std::string_view policy, std::string_view budget);

// One run of a sweep.
struct KvSweepEntry {
  std::string policy;  // "h2o"
  std::string budget;  // the budget label ("20%"); empty when the entry has no budget (full,
                       // or a list given without budgets)
  std::string spec;    // the --kv spec to run, e.g. "h2o:heavy=10%,recent=10%"
};

// Expands a --kv list and an optional budget list (comma-separated, e.g.
// "4%,10%,20%,60%"; empty: no sweep).
// - Without budgets: one entry per spec of the list (SplitKvSpecList), each
//   checked with ParseKvSpec.
// - With budgets: each policy of the list gets one entry per budget, in
//   list order, except full, which gets one entry. A policy may carry the
//   parameters the split does not set ("h2o:score=mean", "snapkv:window=16";
//   its entry's policy is that text). Budgets must all be percentages or
//   all token counts (one x axis).
// Errors are one line: a parameter the split sets, an unknown policy, a
// bad or empty budget, mixed budget kinds.
Result<std::vector<KvSweepEntry>> ExpandKvSweep(std::string_view kv_list,
                                                std::string_view budget_list);

}  // namespace h2o
