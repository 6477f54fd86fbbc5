// The --kv option: `POLICY[:key=value[,key=value...]]`, e.g.
// "h2o:heavy=10%,recent=10%" or "sink:sinks=4,recent=508". Parsing
// (ParseKvSpec) checks the grammar and the keys; resolving (ResolveKvSpec)
// turns percentages of the sequence length into absolute token counts and
// checks the budget; MakePolicy builds the EvictionPolicy. Errors are one
// line that names the problem and what is valid. All functions are pure and
// thread-safe.
//
// Percentages are of the sequence length: the tokens the cache will hold
// (what the caller passes as prompt_len: a prompt plus the tokens to
// generate; a conversation's context, -c, where its length is not known in
// advance). A policy given none of its budget keys ("--kv h2o") gets
// kDefaultBudgetPercent of it, split as kv/kv_budget.h splits a --budget.
//
// Keys per policy. A value is a token count: a non-negative integer or a
// percentage of the sequence length like 10% or 12.5%; except seed, kernel
// and pyramid (integers, never percentages), score (a word: one of the listed names)
// and decay (a decimal fraction like 0.9, never a percentage):
//   full    (none)
//   local   recent
//   sink    sinks (default 4), recent (>= 1 after resolving)
//   h2o     heavy, recent, score (sum | mean | ema; default sum, the
//           paper's), decay (0 < decay < 1, default 0.9; only with
//           score=ema): h2o:heavy=10%,recent=10%,score=ema,decay=0.95,
//           or nested as score=ema:decay=0.95.
//           What each score ranks by: kv/policies.h, H2oScore.
//           pyramid (an integer >= 1; absent: every layer alike):
//           PyramidKV's per-layer budgets, kv/pyramid.h.
//   h2only  heavy
//   tova    k
//   random  k, recent (default 0), seed (default 0)
//   snapkv  budget, window (default 32; 1 <= window < budget after
//           resolving), kernel (an odd integer, default 7; 1 is no
//           pooling), pyramid (as for h2o): snapkv:budget=10%,window=32.
//           What it keeps, and what its observation window is when the
//           prompt comes in chunks: kv/snapkv.h.
// A word value is lowercase letters; a key's value is never a list, so the
// comma stays the separator of key=value pairs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "kv/kv_policy.h"

namespace h2o {

// The budget of a policy named without one: 20% of the sequence, the
// paper's heavy=10%,recent=10% for h2o.
inline constexpr uint64_t kDefaultBudgetPercent = 20;

// Parsed --kv text; budgets not yet resolved.
struct KvSpec {
  std::string text;    // as given, e.g. "h2o:heavy=10%,recent=10%"
  std::string policy;  // "full", "local", "sink", "h2o", "h2only", "tova", "random", "snapkv"
  struct Amount {
    double value = 0;      // the number as written (10 for "10%")
    bool percent = false;  // value is a percentage of the sequence length
    // Exact form, value == digits / 10^scale: doubles cannot hold every
    // 64-bit seed, and 29% of 100 must resolve to 29, not 28.
    uint64_t digits = 0;
    int32_t scale = 0;
    // A word value (score=mean): the word, and value/digits stay 0. Empty
    // for numbers.
    std::string word;
  };
  std::map<std::string, Amount> params;  // keys as given; defaults not filled in
};

// Parses and validates the grammar, the policy name, the keys (unknown,
// duplicate, missing required) and the value forms; fills in the default
// budget (kDefaultBudgetPercent) where the spec gives none. Integers must fit in
// int32 (seed: uint64).
Result<KvSpec> ParseKvSpec(std::string_view text);

// Resolved spec: absolute token counts.
struct KvPlan {
  std::string policy = "full";
  int32_t heavy = 0, recent = 0, sinks = 0;
  int32_t k = 0;  // tova's and random's k; snapkv's budget
  int32_t window = 0, kernel = 0;  // snapkv's observation window and pooling kernel
  int32_t pyramid = 0;  // h2o, snapkv: PyramidKV's beta (kv/pyramid.h); 0: every layer alike
  uint64_t seed = 0;
  std::string score = "sum";  // h2o: sum, mean or ema
  double decay = 0.9;         // h2o with score=ema
  int32_t budget = 0;  // tokens kept per (layer, KV head); 0 for full (= the context)
  // Pinned first tokens, kept on top of `budget` whatever the policy says
  // (the universal key keep=N, --kv-keep, a request's n_keep); 0 for full.
  int32_t keep = 0;
  // The plan with absolute values, e.g. "h2o:heavy=51,recent=51"; every key
  // of the policy is listed (defaults included), "full" alone for full,
  // except h2o's score, listed only when it is not the paper's sum (then
  // with its decay for ema: "h2o:heavy=51,recent=51,score=ema,decay=0.9").
  std::string Describe() const;
};

// Splits a list of --kv specs such as "full,h2o:heavy=10%,recent=10%" (2
// specs) or "local:recent=8,sink:sinks=4,recent=4" (2 specs). Specs contain
// commas themselves, so a plain split will not do: a segment continues the
// previous spec when it is a bare key=value (an '=' with no ':' before it)
// and its text before any ':' is not a policy name (full, local, sink, h2o,
// h2only, tova, random, snapkv); every other segment begins a new spec (an unknown
// policy like "bogus:k=1" then fails in ParseKvSpec, which names the valid
// ones). Whitespace around segments is dropped. Errors:
// empty text, an empty segment, or a key=value before any policy. Specs are
// returned as written (not parsed). Pure and thread-safe.
Result<std::vector<std::string>> SplitKvSpecList(std::string_view text);

// Whether any value of the spec is a percentage (so it needs a prompt length).
bool KvSpecUsesPercent(const KvSpec& spec);

// Pins the first n tokens (>= 0) of an evicting policy's spec: sets its
// keep key (--kv-keep, a request's n_keep), replacing one the spec gave.
// Nothing for full, which keeps every token.
void SetKvKeep(KvSpec& spec, int64_t n);

// Resolves percentages as floor(value / 100 * prompt_len), fills defaults,
// and checks that the budget is at least 1 token and fits in int32.
// prompt_len: what percentages refer to; nullopt when unknown, which is an
// error for a spec that uses a percentage. Accepts hand-built specs (it
// re-validates the policy and keys).
Result<KvPlan> ResolveKvSpec(const KvSpec& spec, std::optional<int64_t> prompt_len);

// What resolving `spec` against prompt_len changes silently, one sentence
// each (empty when nothing): a percentage above 100%, and a percentage
// part that floors to 0 tokens (h2o:heavy=150%,recent=10% of a 5-token
// prompt has no recent window: it becomes the collapsing h2only). Callers
// print them as warnings. Empty for a spec without percentages or a
// nullopt prompt_len.
std::vector<std::string> KvSpecWarnings(const KvSpec& spec, std::optional<int64_t> prompt_len);

// Builds the plan's policy; its budget() equals plan.budget, or n_ctx for
// full. Requires a plan returned by ResolveKvSpec and n_ctx >= 1. The
// caller decides what to do when plan.budget exceeds n_ctx.
std::unique_ptr<EvictionPolicy> MakePolicy(const KvPlan& plan, int32_t n_ctx);

}  // namespace h2o
