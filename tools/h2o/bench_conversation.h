// `h2o bench --conversations N --turns K`: the conversation mode
// (perf/conversation.h) for each --kv policy, with the prompt cache on,
// off, or both, printed as the other modes print.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_output.h"
#include "kv/kv_spec.h"
#include "perf/bench.h"

namespace h2o::cli {

struct ConversationModeArgs {
  std::string model_path;
  bool no_repack = false;
  std::vector<KvSpec> specs;
  int32_t users = 0;
  int32_t turns = 10;
  int32_t turn_tokens = 64;  // -p
  int32_t generate = 32;     // -n
  std::string cache_ram = "1GiB";
  std::string prompt_cache = "both";  // on, off, both
  BenchOptions bench;
  Output output = Output::kMarkdown;
};

int RunConversationMode(const ConversationModeArgs& args);

}  // namespace h2o::cli
