// Where an evaluation loop gets the session for an item. Percent budgets
// (h2o:heavy=10%,recent=10%) refer to each item's prompt length, so the
// command may build a session per item; otherwise it hands back one.
#pragma once

#include <cstdint>
#include <functional>

#include "core/status.h"
#include "runtime/session.h"

namespace h2o {

// Returns the session to use for an item whose prompt has prompt_len
// tokens; it stays valid until the next call.
using SessionSource = std::function<Result<Session*>(int64_t prompt_len)>;

}  // namespace h2o
