// --kv parsing. The policy registry (kv/policy_registry.h) lists each
// policy's keys; parsing and resolving both read it, so a key is added in
// one place.
#include "kv/kv_spec.h"

#include <charconv>
#include <limits>
#include <span>
#include <string>

#include <fmt/format.h>

#include "core/strings.h"
#include "kv/policy_registry.h"

namespace h2o {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

// keep=N, a key of every evicting policy: the first N tokens pinned on top
// of its budget (KvPlan::keep).
constexpr KvKey kKeepKey{"keep", false, 0, KvValueKind::kInteger};

const KvKey* FindKey(const PolicyDescriptor& policy, std::string_view key) {
  if (policy.evicts && key == kKeepKey.name) return &kKeepKey;
  for (const KvKey& k : policy.keys) {
    if (key == k.name) return &k;
  }
  return nullptr;
}

Status UnknownKey(const PolicyDescriptor& policy, std::string_view key) {
  if (policy.keys.empty()) {
    return Status::Error("unknown key '" + std::string(key) + "' for policy '" + policy.name +
                         "' (it takes no parameters)");
  }
  std::string valid;
  for (const KvKey& k : policy.keys) valid += (valid.empty() ? "" : ", ") + std::string(k.name);
  if (policy.evicts) valid += std::string(", ") + kKeepKey.name;
  return Status::Error("unknown key '" + std::string(key) + "' for policy '" + policy.name +
                       "' (valid: " + valid + ")");
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Appends decimal digits to *digits; false on overflow of uint64.
bool AccumulateDigits(std::string_view s, uint64_t* digits) {
  for (char c : s) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (*digits > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    *digits = *digits * 10 + d;
  }
  return true;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

std::string JoinWords(std::span<const std::string_view> words) {
  std::string joined;
  for (std::string_view w : words) joined.append(joined.empty() ? "" : ", ").append(w);
  return joined;
}

// "'TEXT' for 'KEY'", for error messages.
std::string ValueWhere(std::string_view key, std::string_view text) {
  std::string where = "'";  // built by appending: GCC 12 warns falsely on "x" + string&&
  where.append(text).append("' for '").append(key).append("'");
  return where;
}

// A word value: one of info.words, as written.
Result<KvSpec::Amount> ParseWord(const KvKey& info, std::string_view text) {
  for (std::string_view w : info.words) {
    if (text == w) {
      KvSpec::Amount amount;
      amount.word = std::string(text);
      return amount;
    }
  }
  return Status::Error("bad value " + ValueWhere(info.name, text) +
                       ": expected one of " + JoinWords(info.words));
}

// A decimal fraction: digits, optionally '.' and more digits ("0.9", "1",
// "0.95"); no sign, exponent or '%'. Its range is CheckValues' business.
Result<KvSpec::Amount> ParseFraction(const KvKey& info, std::string_view text) {
  const std::string where = ValueWhere(info.name, text);
  std::string_view int_part = text, frac_part;
  const size_t dot = text.find('.');
  if (dot != std::string_view::npos) {
    int_part = text.substr(0, dot);
    frac_part = text.substr(dot + 1);
  }
  if (!AllDigits(int_part) || (dot != std::string_view::npos && !AllDigits(frac_part))) {
    return Status::Error("bad value " + where + ": expected a decimal number like 0.9");
  }
  KvSpec::Amount amount;
  // Not std::stod: it follows the C locale's decimal separator. from_chars
  // rounds correctly, so Describe()'s shortest form reads back the same.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), amount.value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::Error("value " + where + " is out of range");
  }
  return amount;
}

// Parses a value by its key's kind: "123", or for a token count also
// "12%" / "12.5%"; a word; a fraction.
Result<KvSpec::Amount> ParseAmount(const KvKey& info, std::string_view text) {
  if (info.kind == KvValueKind::kWord) return ParseWord(info, text);
  if (info.kind == KvValueKind::kFraction) return ParseFraction(info, text);
  const bool integer_only = info.kind == KvValueKind::kInteger;
  const std::string where = ValueWhere(info.name, text);
  const Status bad = Status::Error(
      "bad value " + where +
      (integer_only ? ": expected a non-negative integer"
                    : ": expected a non-negative integer or a percentage like 10%"));
  KvSpec::Amount amount;
  std::string_view number = text;
  if (!number.empty() && number.back() == '%') {
    if (integer_only) return bad;
    amount.percent = true;
    number.remove_suffix(1);
  }
  std::string_view int_part = number, frac_part;
  if (const size_t dot = number.find('.'); dot != std::string_view::npos) {
    if (!amount.percent) return bad;  // absolute counts are whole tokens
    int_part = number.substr(0, dot);
    frac_part = number.substr(dot + 1);
    if (!AllDigits(frac_part)) return bad;
  }
  if (!AllDigits(int_part)) return bad;
  if (!AccumulateDigits(int_part, &amount.digits) || !AccumulateDigits(frac_part, &amount.digits)) {
    return Status::Error("value " + where + " is too large");
  }
  amount.scale = static_cast<int32_t>(frac_part.size());
  const uint64_t max = integer_only ? std::numeric_limits<uint64_t>::max() : kInt32Max;
  if (!amount.percent && amount.digits > max) {
    return Status::Error("value " + where + " is too large (at most " + std::to_string(max) + ")");
  }
  // Not std::stod: it follows the C locale's decimal separator.
  amount.value = static_cast<double>(amount.digits);
  for (int32_t i = 0; i < amount.scale; ++i) amount.value /= 10;
  return amount;
}

// floor(amount.digits / 10^scale / 100 * prompt_len) for a percentage.
Result<int64_t> ResolveAmount(const std::string& key, const KvSpec::Amount& amount,
                              int64_t prompt_len) {
  if (!amount.percent) return static_cast<int64_t>(amount.digits);
  unsigned __int128 denominator = 100;
  for (int32_t i = 0; i < amount.scale; ++i) denominator *= 10;
  const unsigned __int128 tokens =
      static_cast<unsigned __int128>(amount.digits) * static_cast<uint64_t>(prompt_len) /
      denominator;
  if (tokens > kInt32Max) {
    return Status::Error("'" + key + "' resolves to more than " + std::to_string(kInt32Max) +
                         " tokens");
  }
  return static_cast<int64_t>(tokens);
}

// A policy named without any of its budget keys ("h2o", "snapkv:window=16")
// gets kDefaultBudgetPercent of the sequence, split as a --budget sweep
// splits it (h2o: the paper's heavy=10%,recent=10%). A spec that gives part
// of a budget (h2o:heavy=64) is not completed: it still lacks a key.
void FillDefaultBudget(const PolicyDescriptor& policy, KvSpec& spec) {
  const BudgetSplit& split = policy.split;
  if (!policy.evicts || split.kind == BudgetSplit::Kind::kNone) return;
  const bool fixed_first = split.kind == BudgetSplit::Kind::kAfterFixed;
  if ((!fixed_first && spec.params.contains(split.first)) ||
      (split.second != nullptr && spec.params.contains(split.second))) {
    return;
  }
  auto percent = [](uint64_t digits) {
    KvSpec::Amount amount;
    amount.value = static_cast<double>(digits);
    amount.percent = true;
    amount.digits = digits;
    return amount;
  };
  switch (split.kind) {
    case BudgetSplit::Kind::kWhole:
      spec.params[split.first] = percent(kDefaultBudgetPercent);
      break;
    case BudgetSplit::Kind::kHalves:
      spec.params[split.first] = percent(kDefaultBudgetPercent / 2);
      spec.params[split.second] = percent(kDefaultBudgetPercent - kDefaultBudgetPercent / 2);
      break;
    case BudgetSplit::Kind::kAfterFixed:  // the fixed key keeps its own default
      spec.params[split.second] = percent(kDefaultBudgetPercent);
      break;
    case BudgetSplit::Kind::kNone:
      break;
  }
}

Status CheckRequiredKeys(const PolicyDescriptor& policy, const KvSpec& spec) {
  for (const KvKey& k : policy.keys) {
    if (k.required && !spec.params.contains(k.name)) {
      return Status::Error("missing key '" + std::string(k.name) + "' for policy '" + policy.name +
                           "'");
    }
  }
  return Status::Ok();
}

// "bad value 'N' for 'KEY': expected EXPECTED" where the spec gives `key`
// a whole number that `fits` refuses; Ok where it fits or is absent.
Status CheckCount(const KvSpec& spec, const std::string& key, bool (*fits)(uint64_t),
                  std::string_view expected) {
  const auto found = spec.params.find(key);
  if (found == spec.params.end() || fits(found->second.digits)) return Status::Ok();
  return Status::Error(
      fmt::format("bad value '{}' for '{}': expected {}", found->second.digits, key, expected));
}

// The checks a value's form alone cannot make, for parsed and hand-built
// specs alike: a word is one of its key's words, a number is not a word,
// decay lies in (0, 1) and comes with score=ema.
Status CheckValues(const PolicyDescriptor& policy, const KvSpec& spec) {
  for (const auto& [key, amount] : spec.params) {
    const KvKey* info = FindKey(policy, key);
    if (info == nullptr) continue;  // reported as an unknown key
    if ((info->kind == KvValueKind::kWord) != !amount.word.empty()) {
      return Status::Error("bad value for '" + key + "': expected " +
                           (info->kind == KvValueKind::kWord ? "one of " + JoinWords(info->words)
                                                           : std::string("a number")));
    }
    if (info->kind == KvValueKind::kWord) H2O_RETURN_IF_ERROR(ParseWord(*info, amount.word).status());
  }
  constexpr auto kMax = static_cast<uint64_t>(kInt32Max);
  H2O_RETURN_IF_ERROR(CheckCount(
      spec, "kernel", [](uint64_t k) { return k % 2 == 1 && k <= kMax; },
      fmt::format("an odd number of positions up to {} (the pooling is centred on each token; 1 "
                  "is none)",
                  kInt32Max)));
  H2O_RETURN_IF_ERROR(CheckCount(
      spec, "pyramid", [](uint64_t beta) { return beta >= 1 && beta <= kMax; },
      fmt::format("an integer from 1 to {} (PyramidKV's beta: the top layer keeps 1/beta of the "
                  "selected tokens; 1 is flat)",
                  kInt32Max)));
  if (const auto decay = spec.params.find("decay"); decay != spec.params.end()) {
    const double d = decay->second.value;
    if (!(d > 0 && d < 1) || decay->second.percent) {
      return Status::Error(fmt::format(
          "bad value '{}' for 'decay': expected a number between 0 and 1, both excluded "
          "(1 would be score=sum)",
          decay->second.percent ? fmt::format("{:g}%", d) : fmt::format("{}", d)));
    }
    const auto score = spec.params.find("score");
    if (score == spec.params.end() || score->second.word != "ema") {
      return Status::Error("'decay' needs score=ema (e.g. " + std::string(policy.name) +
                           ":heavy=64,recent=64,score=ema,decay=0.9)");
    }
  }
  return Status::Ok();
}

// A segment continues the previous spec only when it is a bare key=value:
// it has an '=' with no ':' before it, and is not a policy name.
bool StartsSpec(std::string_view segment) {
  const size_t colon = segment.find(':');
  const std::string_view name = segment.substr(0, colon);
  if (FindPolicy(name) != nullptr) return true;
  const size_t equals = segment.find('=');
  return equals == std::string_view::npos || colon < equals;
}

}  // namespace

Result<KvSpec> ParseKvSpec(std::string_view text) {
  if (text.empty()) {
    return Status::Error(
        "empty KV spec (expected POLICY[:key=value,...], e.g. h2o:heavy=10%,recent=10%)");
  }
  KvSpec spec;
  spec.text = std::string(text);
  const size_t colon = text.find(':');
  spec.policy = std::string(text.substr(0, colon));
  const PolicyDescriptor* policy = FindPolicy(spec.policy);
  if (policy == nullptr) return UnknownPolicy(spec.policy);
  if (colon == std::string_view::npos) {
    FillDefaultBudget(*policy, spec);
    H2O_RETURN_IF_ERROR(CheckRequiredKeys(*policy, spec));
    H2O_RETURN_IF_ERROR(CheckValues(*policy, spec));
    return spec;
  }
  std::string_view rest = text.substr(colon + 1);
  std::string unnested;  // backs `rest` once a word's option has been split off
  if (rest.empty()) {
    return Status::Error("nothing after ':' in KV spec '" + spec.text +
                         "' (expected key=value pairs)");
  }
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.empty()) {
      return Status::Error(std::string(comma == std::string_view::npos ? "trailing comma"
                                                                       : "empty parameter") +
                           " in KV spec '" + spec.text + "'");
    }
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::Error("key without '=' in KV spec '" + spec.text + "': '" +
                           std::string(item) + "' (expected key=value)");
    }
    const std::string key(item.substr(0, eq));
    if (key.empty()) {
      return Status::Error("missing key before '=' in KV spec '" + spec.text + "'");
    }
    const KvKey* info = FindKey(*policy, key);
    if (info == nullptr) return UnknownKey(*policy, key);
    if (spec.params.contains(key)) {
      return Status::Error("duplicate key '" + key + "' in KV spec '" + spec.text + "'");
    }
    std::string_view value = item.substr(eq + 1);
    // "score=ema:decay=0.9", issue 17's spelling of a word with an option of
    // its own, reads as "score=ema,decay=0.9": the word ends at the ':'.
    std::string_view nested;
    if (const size_t at = value.find(':');
        info->kind == KvValueKind::kWord && at != std::string_view::npos) {
      nested = value.substr(at + 1);
      value = value.substr(0, at);
      if (nested.empty()) {
        return Status::Error("nothing after ':' in '" + std::string(item) + "' in KV spec '" +
                             spec.text + "' (expected key=value, e.g. score=ema:decay=0.9)");
      }
    }
    H2O_ASSIGN_OR_RETURN(spec.params[key], ParseAmount(*info, value));
    if (!nested.empty()) {
      std::string next(nested);
      if (comma != std::string_view::npos) next.append(",").append(rest.substr(comma + 1));
      unnested = std::move(next);
      rest = unnested;
      continue;
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  FillDefaultBudget(*policy, spec);
  H2O_RETURN_IF_ERROR(CheckRequiredKeys(*policy, spec));
  H2O_RETURN_IF_ERROR(CheckValues(*policy, spec));
  return spec;
}

bool KvSpecUsesPercent(const KvSpec& spec) {
  for (const auto& [key, amount] : spec.params) {
    if (amount.percent) return true;
  }
  return false;
}

Result<KvPlan> ResolveKvSpec(const KvSpec& spec, std::optional<int64_t> prompt_len) {
  const PolicyDescriptor* policy = FindPolicy(spec.policy);
  if (policy == nullptr) return UnknownPolicy(spec.policy);
  for (const auto& [key, amount] : spec.params) {
    const KvKey* info = FindKey(*policy, key);
    if (info == nullptr) return UnknownKey(*policy, key);
    if (amount.percent && info->kind == KvValueKind::kInteger) {
      return Status::Error("bad value for '" + key + "': a percentage is not allowed");
    }
  }
  H2O_RETURN_IF_ERROR(CheckRequiredKeys(*policy, spec));
  H2O_RETURN_IF_ERROR(CheckValues(*policy, spec));
  const bool uses_percent = KvSpecUsesPercent(spec);
  if (uses_percent && !prompt_len.has_value()) {
    return Status::Error("percentage budgets need a sequence length (KV spec '" + spec.text + "')");
  }
  if (prompt_len.has_value() && *prompt_len < 0) {
    return Status::Error("prompt length must be non-negative (got " +
                         std::to_string(*prompt_len) + ")");
  }

  KvPlan plan;
  plan.policy = spec.policy;
  if (!policy->evicts) return plan;
  for (const KvKey& k : policy->keys) {
    const auto it = spec.params.find(k.name);
    if (k.kind == KvValueKind::kWord || k.kind == KvValueKind::kFraction) {
      if (it == spec.params.end()) continue;  // KvPlan's defaults
      if (std::string_view(k.name) == "score") plan.score = it->second.word;
      if (std::string_view(k.name) == "decay") plan.decay = it->second.value;
      continue;
    }
    uint64_t value = k.default_value;
    if (it != spec.params.end()) {
      if (k.kind == KvValueKind::kInteger) {
        value = it->second.digits;
      } else {
        H2O_ASSIGN_OR_RETURN(const int64_t tokens,
                             ResolveAmount(k.name, it->second, prompt_len.value_or(0)));
        value = static_cast<uint64_t>(tokens);
      }
    }
    const std::string_view name = k.name;
    if (name == "seed") {
      plan.seed = value;
    } else {
      const auto tokens = static_cast<int32_t>(value);  // <= kInt32Max, checked above
      if (name == "heavy") plan.heavy = tokens;
      if (name == "recent") plan.recent = tokens;
      if (name == "sinks") plan.sinks = tokens;
      if (name == "k" || name == "budget") plan.k = tokens;  // snapkv's budget is its k
      if (name == "window") plan.window = tokens;
      if (name == "kernel") plan.kernel = tokens;
      if (name == "pyramid") plan.pyramid = tokens;
    }
  }
  const int64_t budget = static_cast<int64_t>(plan.heavy) + plan.recent + plan.sinks + plan.k;
  const std::string prompt_note =
      uses_percent ? " for a " + std::to_string(*prompt_len) + "-token sequence" : std::string();
  const std::string gives = "(" + spec.text + " gives " + std::to_string(budget) + prompt_note + ")";
  if (budget < 1) return Status::Error("KV budget must be at least 1 token " + gives);
  if (budget > kInt32Max) {
    return Status::Error("KV budget must be at most " + std::to_string(kInt32Max) + " tokens " +
                         gives);
  }
  plan.budget = static_cast<int32_t>(budget);
  if (const auto keep = spec.params.find(kKeepKey.name); keep != spec.params.end()) {
    if (keep->second.digits > static_cast<uint64_t>(plan.budget)) {
      return Status::Error(fmt::format(
          "keep={} pins more tokens than the policy's budget of {} {}: pinned tokens are kept "
          "on top of the budget, at most as many",
          keep->second.digits, plan.budget, gives));
    }
    plan.keep = static_cast<int32_t>(keep->second.digits);
  }
  if (policy->check != nullptr) H2O_RETURN_IF_ERROR(policy->check(plan, spec.text, prompt_note));
  if (plan.pyramid > 0 && budget > kInt32Max / 2) {
    // The lowest layer keeps up to twice the budget.
    return Status::Error(
        fmt::format("a pyramid needs a KV budget of at most {} tokens {}", kInt32Max / 2, gives));
  }
  return plan;
}

std::vector<std::string> KvSpecWarnings(const KvSpec& spec, std::optional<int64_t> prompt_len) {
  std::vector<std::string> warnings;
  if (!prompt_len.has_value() || *prompt_len < 0) return warnings;
  for (const auto& [key, amount] : spec.params) {
    if (!amount.percent) continue;
    const std::string part = key + "=" + fmt::format("{:g}", amount.value) + "%";
    if (amount.value > 100) {
      warnings.push_back(fmt::format("'{}' in {} is more than the whole sequence", part, spec.text));
    }
    Result<int64_t> tokens = ResolveAmount(key, amount, *prompt_len);
    if (amount.digits > 0 && tokens.ok() && *tokens == 0) {
      warnings.push_back(fmt::format("'{}' in {} is 0 tokens for a {}-token sequence, so the policy "
                                     "runs without its {} part",
                                     part, spec.text, *prompt_len, key));
    }
  }
  return warnings;
}

void SetKvKeep(KvSpec& spec, int64_t n) {
  H2O_CHECK(n >= 0);
  if (!PolicyEvicts(spec.policy)) return;
  KvSpec::Amount amount;
  amount.value = static_cast<double>(n);
  amount.digits = static_cast<uint64_t>(n);
  spec.params["keep"] = amount;
}

std::string KvPlan::Describe() const {
  std::string text = PolicyOf(policy).describe(*this);
  if (keep > 0) text += fmt::format(",keep={}", keep);
  return text;
}

std::unique_ptr<EvictionPolicy> MakePolicy(const KvPlan& plan, int32_t n_ctx) {
  H2O_CHECK(n_ctx >= 1);
  return PolicyOf(plan.policy).make(plan, n_ctx);
}

Result<std::vector<std::string>> SplitKvSpecList(std::string_view text) {
  if (Trim(text).empty()) return Status::Error("empty KV spec list");
  std::vector<std::string> specs;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view segment =
        Trim(text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin));
    if (segment.empty()) {
      return Status::Error(fmt::format("empty KV spec in '{}'", text));
    }
    if (!StartsSpec(segment)) {
      if (specs.empty()) {
        return Status::Error(fmt::format(
            "'{}' in '{}' comes before any policy name (a spec is POLICY[:key=value,...])", segment,
            text));
      }
      specs.back() += ",";
      specs.back() += segment;
    } else {
      specs.emplace_back(segment);
    }
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return specs;
}

}  // namespace h2o
