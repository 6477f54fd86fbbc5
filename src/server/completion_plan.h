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
std::optional<ApiError> PlanCompletion(const CompletionParams& params, int64_t n_prompt,
                                       int32_t n_ctx, const KvSpec& default_kv,
                                       int64_t default_max_tokens, CompletionPlan& out);

}  // namespace h2o::server
