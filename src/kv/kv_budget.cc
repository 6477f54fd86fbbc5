#include "kv/kv_budget.h"

#include <algorithm>

#include <fmt/format.h>

#include <limits>

#include "core/strings.h"
#include "kv/kv_spec.h"
#include "kv/policy_registry.h"

namespace h2o {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// digits / 10^scale written back as decimal text: (625, 2) -> "6.25".
std::string FormatDecimal(uint64_t digits, int32_t scale) {
  std::string s = std::to_string(digits);
  if (scale == 0) return s;
  if (s.size() <= static_cast<size_t>(scale)) s.insert(0, scale + 1 - s.size(), '0');
  const size_t point = s.size() - scale;
  return fmt::format("{}.{}", s.substr(0, point), s.substr(point));
}

// Half of a percentage, exactly: 10% -> 5%, 12.5% -> 6.25%, 1% -> 0.5%.
std::string HalfPercent(const KvBudget& b) {
  if (b.digits % 2 == 0) return FormatDecimal(b.digits / 2, b.scale) + "%";
  return FormatDecimal(b.digits * 5, b.scale + 1) + "%";  // digits <= 100 * 10^scale: no overflow
}

// The key of one "key=value" parameter ("score" of "score=ema:decay=0.9").
std::string_view ParamKey(std::string_view param) {
  return Trim(param.substr(0, std::min(param.find('='), param.find(':'))));
}

// A listed policy at one budget: the policy's split of the budget, then
// the parameters the list gave it ("h2o:score=mean" at 10% is
// "h2o:heavy=5%,recent=5%,score=mean"). A parameter the split sets is an
// error: the budget decides it.
Result<std::string> SpecAtBudgetWithParams(std::string_view listed, const KvBudget& b) {
  const size_t colon = listed.find(':');
  H2O_ASSIGN_OR_RETURN(std::string spec, KvSpecAtBudget(Trim(listed.substr(0, colon)), b.text));
  if (colon == std::string_view::npos) return spec;
  const std::string_view params = listed.substr(colon + 1);
  const std::string_view split = std::string_view(spec).substr(spec.find(':') + 1);
  for (std::string_view param : SplitCommas(params)) {
    for (std::string_view set : SplitCommas(split)) {
      if (ParamKey(param) == ParamKey(set)) {
        return Status::Error(fmt::format(
            "'{}' sets '{}', which a budget sweep sets from each budget ({} at {}); give the "
            "policy's other parameters only",
            listed, ParamKey(param), spec, b.text));
      }
    }
  }
  return spec + "," + std::string(params);
}

}  // namespace

Result<KvBudget> ParseKvBudget(std::string_view text) {
  KvBudget b;
  b.text = std::string(Trim(text));
  const Status bad = Status::Error(fmt::format(
      "bad budget '{}' (expected a token count like 64 or a percentage like 10% or 12.5%)",
      b.text));
  std::string_view number = b.text;
  if (!number.empty() && number.back() == '%') {
    b.percent = true;
    number.remove_suffix(1);
  }
  std::string_view int_part = number, frac_part;
  if (const size_t dot = number.find('.'); dot != number.npos) {
    if (!b.percent) return bad;  // a token count is whole
    int_part = number.substr(0, dot);
    frac_part = number.substr(dot + 1);
    if (!AllDigits(frac_part)) return bad;
  }
  if (!AllDigits(int_part)) return bad;
  // At most 100% or int32 tokens, and a few decimals: 18 digits fit uint64.
  if (int_part.size() + frac_part.size() > 18) {
    return Status::Error(fmt::format("budget '{}' is too large", b.text));
  }
  for (char c : int_part) b.digits = b.digits * 10 + static_cast<uint64_t>(c - '0');
  for (char c : frac_part) b.digits = b.digits * 10 + static_cast<uint64_t>(c - '0');
  b.scale = static_cast<int32_t>(frac_part.size());
  b.value = static_cast<double>(b.digits);
  for (int32_t i = 0; i < b.scale; ++i) b.value /= 10;
  if (b.digits == 0) return Status::Error(fmt::format("budget '{}' must be above 0", b.text));
  if (b.percent && b.value > 100) {
    return Status::Error(fmt::format("budget '{}' is over 100%", b.text));
  }
  if (!b.percent && b.digits > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Status::Error(fmt::format("budget '{}' is too large (at most {} tokens)", b.text,
                                     std::numeric_limits<int32_t>::max()));
  }
  return b;
}

Result<std::string> KvSpecAtBudget(std::string_view policy, std::string_view budget) {
  const PolicyDescriptor* p = FindPolicy(policy);
  if (p == nullptr) return UnknownPolicy(policy);
  const BudgetSplit& split = p->split;
  if (split.kind == BudgetSplit::Kind::kNone) return std::string(p->name);
  H2O_ASSIGN_OR_RETURN(const KvBudget b, ParseKvBudget(budget));
  const std::string& all = b.text;
  if (split.kind == BudgetSplit::Kind::kWhole) {
    return fmt::format("{}:{}={}", p->name, split.first, all);
  }
  if (split.kind == BudgetSplit::Kind::kHalves) {
    if (b.percent) {
      return fmt::format("{0}:{1}={3},{2}={3}", p->name, split.first, split.second,
                         HalfPercent(b));
    }
    return fmt::format("{}:{}={},{}={}", p->name, split.first, b.digits / 2, split.second,
                       b.digits - b.digits / 2);
  }
  // kAfterFixed
  const auto fixed = static_cast<uint64_t>(split.fixed);
  if (b.percent) {
    return fmt::format("{}:{}={},{}={}", p->name, split.first, fixed, split.second, all);
  }
  if (b.digits <= fixed) {
    return Status::Error(fmt::format(
        "{} at budget {} leaves no {} window (it keeps {} as {}; use a budget of at least {})",
        p->name, all, split.second, fixed, split.first, fixed + 1));
  }
  return fmt::format("{}:{}={},{}={}", p->name, split.first, fixed, split.second, b.digits - fixed);
}

Result<std::vector<KvSweepEntry>> ExpandKvSweep(std::string_view kv_list,
                                                std::string_view budget_list) {
  H2O_ASSIGN_OR_RETURN(const std::vector<std::string> specs, SplitKvSpecList(kv_list));
  std::vector<KvSweepEntry> entries;
  if (Trim(budget_list).empty()) {
    for (const std::string& text : specs) {
      H2O_ASSIGN_OR_RETURN(const KvSpec spec, ParseKvSpec(text));
      entries.push_back({spec.policy, "", text});
    }
    return entries;
  }
  std::vector<KvBudget> budgets;
  for (std::string_view item : SplitCommas(budget_list)) {
    if (item.empty()) return Status::Error(fmt::format("empty budget in '{}'", budget_list));
    H2O_ASSIGN_OR_RETURN(KvBudget b, ParseKvBudget(item));
    if (!budgets.empty() && b.percent != budgets.front().percent) {
      return Status::Error(fmt::format(
          "budgets '{}' mix percentages and token counts (use one kind: they share an x axis)",
          budget_list));
    }
    budgets.push_back(std::move(b));
  }
  for (const std::string& policy : specs) {
    const PolicyDescriptor* listed =
        FindPolicy(Trim(std::string_view(policy).substr(0, policy.find(':'))));
    if (listed != nullptr && !listed->evicts) {
      entries.push_back({policy, "", policy});
      continue;
    }
    for (const KvBudget& b : budgets) {
      H2O_ASSIGN_OR_RETURN(std::string spec, SpecAtBudgetWithParams(policy, b));
      // The expansion is checked like a hand-written spec (e.g. too large).
      H2O_RETURN_IF_ERROR(ParseKvSpec(spec).status());
      entries.push_back({policy, b.text, std::move(spec)});
    }
  }
  // "--budget 10%" alone (the default --kv is full) would silently run
  // the full cache once.
  if (std::all_of(entries.begin(), entries.end(), [](const KvSweepEntry& e) { return e.budget.empty(); })) {
    return Status::Error(fmt::format(
        "budgets '{}' need an evicting policy in the --kv list to sweep (e.g. full,local,h2o,sink)",
        budget_list));
  }
  return entries;
}

}  // namespace h2o
