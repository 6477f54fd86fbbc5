// Feeding tokens to a Session while looking at the logits after each one:
// the loop every log-likelihood scorer (multiple choice, scored requests)
// shares, chunked by the session's max_chunk so eviction runs exactly as
// `--chunk` says.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "core/status.h"
#include "runtime/session.h"

namespace h2o {

// Called with i and the logits that follow ids[i] (they predict ids[i+1]).
using LogitsVisitor = std::function<void(size_t i, std::span<const float> logits)>;

// Appends `ids` to what the session already holds, in chunks of its
// max_chunk, and calls visit(i, logits) for every i in order. Errors: those
// of Session::Eval (bad id, context full); the session then holds the
// chunks fed before the error.
Status FeedTokens(Session& session, std::span<const int32_t> ids, const LogitsVisitor& visit);

}  // namespace h2o
