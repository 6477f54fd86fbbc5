// GET /v1/kv/{id}?layer=L: a request's KV cache as JSON, the playground's
// data. The cache part is --kv-dump's object (report/kv_dump.h), so a finished
// request answers exactly what `h2o generate --kv-dump` writes for the
// same run; around it: the request's status, its tokens' text, the bytes
// and evictions, and how many (layer, head) slots hold each position.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "server/api_request.h"
#include "server/kv_state.h"
#include "tokenizer/tokenizer.h"

namespace h2o::server {

// The `layer` query parameter: absent or "all" (every layer, nullopt), or
// a layer index below n_layer; anything else is a 400 naming "layer".
std::optional<ApiError> ParseKvLayer(const std::optional<std::string>& text, int32_t n_layer,
                                     std::optional<int32_t>& layer);

// A request not yet admitted (state null) is "queued", with no layers.
std::string KvStateBody(const std::string& id, const KvState* state,
                        std::optional<int32_t> layer, int32_t n_layer, int32_t n_head_kv,
                        const Tokenizer& tokenizer);

}  // namespace h2o::server
