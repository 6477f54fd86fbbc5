// The --kv-dump file: what a cache keeps, per layer and KV head, as JSON.
#pragma once

#include <string>

#include "kv/kv_cache.h"

namespace h2o {

// {"policy", "budget", "capacity", "scores_tracked", "layers": [{"layer",
// "heads": [{"head", "positions", "scores"}]}]}, positions ascending, each
// with its accumulated score (0 when the policy tracks none). A
// sliding-window layer also has "window" (the tokens it keeps) and its
// heads have no "scores": it tracks none, whatever the policy.
std::string KvDumpJson(const KvCache& cache);

}  // namespace h2o
