// What a parsed completion request runs with (its token limit and its
// resolved KV plan), or the 400 that refuses it: the checks between
// parsing a request and submitting it, pure, so they are tested without a
// server.
#pragma once

#include <cstdint>
#include <optional>

#include "kv/kv_spec.h"
#include "server/api_request.h"

namespace h2o::server {

struct CompletionPlan {
  int32_t max_tokens = 0;
  KvPlan kv;
};

// n_prompt: the prompt's tokens; n_ctx: the server's context. A request
// without max_tokens gets the rest of the context, at most
// default_max_tokens, so a full-cache request on a long-context model does
// not reserve (and wait for) the KV memory of its whole context. Its "kv"
// (or else default_kv) is resolved against the server's context, as `h2o
// chat` resolves it: every turn of a conversation then has one budget, so
// the prompt cache can resume a turn from the one before (a budget of 20%
// is 20% of the context; a request shorter than that evicts nothing).
//
// n_keep (or else default_keep) pins that many first tokens on top of an
// evicting policy's budget; -1 pins keep_all (a chat's system prompt, a
// completion's whole prompt). More than the prompt or than the policy's
// budget is a 400 naming n_keep; under full it changes nothing.
struct KeepTokens {
  int64_t default_keep = 0;  // the server's --kv-keep
  int64_t keep_all = 0;      // what -1 means for this request
};
std::optional<ApiError> PlanCompletion(const CompletionParams& params, int64_t n_prompt,
                                       int32_t n_ctx, const KvSpec& default_kv,
                                       int64_t default_max_tokens, const KeepTokens& keep,
                                       CompletionPlan& out);

}  // namespace h2o::server
