// `h2o bench --conversations N --turns K`: N simulated users, each holding
// a K-turn conversation whose every turn resends the whole history (as a
// chat client does), served one request at a time through the Scheduler
// with its prompt cache bounded to a fixed RAM. Measures what the cache
// gives a policy: time to first token per turn, and how many
// conversations its kept states fit in that RAM (an evicting policy keeps
// a conversation in what its budget holds). Independent of the command
// line; the caller prints the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "kv/kv_spec.h"
#include "kv/kv_types.h"
#include "model/model.h"

namespace h2o {

struct ConversationOptions {
  int32_t users = 4;
  int32_t turns = 10;
  int32_t turn_tokens = 64;  // the (random) tokens each user message adds, >= 1
  int32_t generate = 32;     // tokens of each answer, >= 1
  size_t cache_ram_bytes = size_t{1} << 30;
  bool prompt_cache = true;  // false: every turn feeds its whole history
  int32_t n_threads = 1;
  int32_t chunk = 512;  // prompt tokens per step
  KvTypes kv_types;
  uint64_t seed = 1234;

  // The context a conversation fills (its last turn's prompt + answer);
  // percentage budgets resolve against it, as a server's against -c.
  int32_t context() const { return turns * (turn_tokens + generate); }
};

struct ConversationTurn {
  double ttft_mean_ms = 0;  // submit to first token, over the users
  double ttft_max_ms = 0;
  int32_t prompt_tokens = 0;  // each user's prompt at this turn
  int32_t resumed = 0;        // users whose request resumed a kept state
  double cached_tokens_mean = 0;
};

struct ConversationRecord {
  std::string kv, kv_resolved;
  bool prompt_cache = true;
  std::vector<ConversationTurn> turns;
  // Bytes the prompt cache took for one conversation's last turn (the
  // states at its prompt's end and where it stopped), mean over users, and
  // how many such conversations fit in the cache RAM.
  size_t kept_bytes_per_conversation = 0;
  int64_t conversations_fit = 0;
  size_t pool_bytes = 0;  // at the end
  int32_t pool_states = 0;
  int64_t pool_evictions = 0;
  double seconds = 0;
};

// Runs the conversations under `spec` (greedy, answers of exactly
// `generate` tokens). Errors: the spec does not resolve against the
// context, bad options, a scheduler error.
Result<ConversationRecord> RunConversations(const Model& model, const KvSpec& spec,
                                            const ConversationOptions& options);

}  // namespace h2o
