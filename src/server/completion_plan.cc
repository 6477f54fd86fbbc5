#include "server/completion_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "kv/policy_registry.h"

namespace h2o::server {

std::optional<ApiError> PlanCompletion(const CompletionParams& params, int64_t n_prompt,
                                       int32_t n_ctx, const KvSpec& default_kv,
                                       int64_t default_max_tokens, const KeepTokens& keep,
                                       CompletionPlan& out) {
  if (n_prompt >= n_ctx || (params.max_tokens && n_prompt + *params.max_tokens > n_ctx)) {
    return ApiError{400,
                    fmt::format("{} prompt tokens + {} to generate exceed the context of {} tokens",
                                n_prompt, params.max_tokens.value_or(1), n_ctx),
                    "invalid_request_error", params.max_tokens ? "max_tokens" : "prompt",
                    "context_length_exceeded"};
  }
  out.max_tokens = params.max_tokens.value_or(
      static_cast<int32_t>(std::min<int64_t>(n_ctx - n_prompt, default_max_tokens)));
  KvSpec spec = default_kv;
  if (!params.kv.empty()) {
    auto parsed = ParseKvSpec(params.kv);
    if (!parsed.ok()) return ApiError{400, parsed.status().message(), "invalid_request_error", "kv", ""};
    spec = *parsed;
  }
  auto plan = ResolveKvSpec(spec, n_ctx);
  if (!plan.ok()) return ApiError{400, plan.status().message(), "invalid_request_error", "kv", ""};
  const int64_t asked = params.n_keep.value_or(keep.default_keep);
  const int64_t n_keep = asked == -1 ? keep.keep_all : asked;
  if (n_keep > 0 && PolicyEvicts(plan->policy)) {
    const auto refuse = [](std::string message) {
      return ApiError{400, std::move(message), "invalid_request_error", "n_keep", ""};
    };
    if (n_keep > n_prompt) {
      return refuse(fmt::format("n_keep {} is more than the prompt's {} tokens", n_keep, n_prompt));
    }
    if (spec.params.contains("keep")) {
      return refuse("n_keep and a keep= in the KV policy: give one of them");
    }
    SetKvKeep(spec, n_keep);
    plan = ResolveKvSpec(spec, n_ctx);
    if (!plan.ok()) return refuse(plan.status().message());
  }
  out.kv = *plan;
  return std::nullopt;
}

}  // namespace h2o::server
