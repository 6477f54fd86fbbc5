// The --kv-dump file: what a cache keeps, per layer and KV head, as JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "kv/kv_cache.h"
#include "kv/kv_snapshot.h"

namespace h2o {

// {"policy", "budget", "capacity", "scores_tracked", "layers": [{"layer",
// "heads": [{"head", "positions", "scores"}]}]}, positions ascending, each
// with its accumulated score (0 when the policy tracks none). A
// sliding-window layer also has "window" (the tokens it keeps) and its
// heads have no "scores": it tracks none, whatever the policy.
std::string KvDumpJson(const KvCache& cache);

// The same object for a snapshot; with only_layer, "layers" holds that
// layer alone (the server's /v1/kv?layer=L).
nlohmann::json KvDumpObject(const KvSnapshot& snapshot,
                            std::optional<int32_t> only_layer = std::nullopt);

}  // namespace h2o
