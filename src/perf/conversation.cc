#include "perf/conversation.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "perf/bench.h"
#include "runtime/engine.h"
#include "runtime/scheduler.h"

namespace h2o {
namespace {

using Clock = std::chrono::steady_clock;

Status CheckOptions(const ConversationOptions& o) {
  if (o.users < 1 || o.turns < 1 || o.turn_tokens < 1 || o.generate < 1 || o.chunk < 1) {
    return Status::Error(fmt::format(
        "conversations need at least 1 user, turn, message token, answer token and chunk token "
        "(got {}, {}, {}, {}, {})",
        o.users, o.turns, o.turn_tokens, o.generate, o.chunk));
  }
  if (static_cast<int64_t>(o.turns) * (o.turn_tokens + o.generate) > INT32_MAX) {
    return Status::Error("the conversations are longer than a context can be");
  }
  return Status::Ok();
}

// One user's request: the history so far, answered greedily with exactly
// `generate` tokens (no tokenizer, so no end-of-generation token ends it).
struct Answer {
  std::vector<int32_t> ids;
  Clock::duration ttft{};
  int32_t cached_tokens = 0;
  size_t kept_bytes = 0;
  std::string error;
};

Answer Ask(Scheduler& scheduler, const std::vector<int32_t>& history, SequenceOptions sequence,
           int32_t generate, bool cache_prompt, Status& status) {
  Answer answer;
  Request request;
  request.prompt = history;
  sequence.n_ctx = static_cast<int32_t>(history.size()) + generate;
  request.sequence = sequence;
  request.generation.sampling.temperature = 0.0f;
  request.generation.max_tokens = generate;
  request.cache_prompt = cache_prompt;
  const Clock::time_point submitted = Clock::now();
  request.on_event = [&answer, submitted](const TokenEvent& e) {
    if (e.finished) {
      if (e.reason == FinishReason::kError) answer.error = e.error;
      answer.cached_tokens = e.cached_tokens;
      answer.kept_bytes = e.kept_bytes;
      return true;
    }
    if (answer.ids.empty()) answer.ttft = Clock::now() - submitted;
    answer.ids.push_back(e.token);
    return true;
  };
  auto id = scheduler.Submit(std::move(request));
  if (!id.ok()) {
    status = id.status();
    return answer;
  }
  while (scheduler.Step()) {
  }
  if (!answer.error.empty()) status = Status::Error(answer.error);
  return answer;
}

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

Result<ConversationRecord> RunConversations(const Model& model, const KvSpec& spec,
                                            const ConversationOptions& options) {
  H2O_RETURN_IF_ERROR(CheckOptions(options));
  const int32_t n_ctx = options.context();
  auto plan = ResolveKvSpec(spec, n_ctx);
  if (!plan.ok()) {
    return plan.status().WithContext(
        fmt::format("--kv '{}' for a context of {} tokens", spec.text, n_ctx));
  }
  SequenceOptions sequence;
  sequence.max_chunk = options.chunk;
  sequence.kv_types = options.kv_types;
  sequence.kv = *plan;
  H2O_ASSIGN_OR_RETURN(
      std::unique_ptr<Engine> engine,
      Engine::Create(model, {.n_threads = options.n_threads, .max_batch_tokens = options.chunk}));
  // The largest request (the last turn) reserves its cache; the prompt
  // cache has the RAM beside it.
  SequenceOptions last = sequence;
  last.n_ctx = n_ctx;
  H2O_ASSIGN_OR_RETURN(const size_t largest, engine->SequenceKvBytes(last));
  const size_t cache_ram = options.prompt_cache ? options.cache_ram_bytes : 0;
  Scheduler scheduler(*engine, {.kv_memory_bytes = largest + cache_ram,
                                .max_queue = 1,
                                .step_tokens = options.chunk,
                                .prompt_cache_bytes = cache_ram});

  ConversationRecord record;
  record.kv = spec.text;
  record.kv_resolved = plan->Describe();
  record.prompt_cache = options.prompt_cache;
  std::vector<std::vector<int32_t>> histories(static_cast<size_t>(options.users));
  const Clock::time_point start = Clock::now();
  size_t kept_last_turn = 0;
  for (int32_t turn = 0; turn < options.turns; ++turn) {
    ConversationTurn t;
    for (int32_t user = 0; user < options.users; ++user) {
      std::vector<int32_t>& history = histories[static_cast<size_t>(user)];
      const std::vector<int32_t> message =
          RandomTokens(model.hparams().n_vocab, static_cast<size_t>(options.turn_tokens),
                       options.seed + static_cast<uint64_t>(user) * 1000003u + turn);
      history.insert(history.end(), message.begin(), message.end());
      Status status = Status::Ok();
      const Answer answer =
          Ask(scheduler, history, sequence, options.generate, options.prompt_cache, status);
      if (!status.ok()) return status;
      const double ttft = Millis(answer.ttft);
      t.ttft_mean_ms += ttft / options.users;
      t.ttft_max_ms = std::max(t.ttft_max_ms, ttft);
      t.prompt_tokens = static_cast<int32_t>(history.size());
      t.resumed += answer.cached_tokens > 0 ? 1 : 0;
      t.cached_tokens_mean += static_cast<double>(answer.cached_tokens) / options.users;
      if (turn + 1 == options.turns) kept_last_turn += answer.kept_bytes;
      // The client resends the whole answer (its last token never fed).
      history.insert(history.end(), answer.ids.begin(), answer.ids.end());
    }
    record.turns.push_back(t);
  }
  record.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  record.kept_bytes_per_conversation = kept_last_turn / static_cast<size_t>(options.users);
  if (record.kept_bytes_per_conversation > 0) {
    record.conversations_fit =
        static_cast<int64_t>(options.cache_ram_bytes / record.kept_bytes_per_conversation);
  }
  const SchedulerStats stats = scheduler.Stats();
  record.pool_bytes = stats.prompt_cache_bytes;
  record.pool_states = stats.prompt_cache_entries;
  record.pool_evictions = stats.prompt_cache_evictions;
  return record;
}

}  // namespace h2o
