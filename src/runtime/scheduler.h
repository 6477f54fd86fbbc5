// Continuous batching under one KV memory limit (DESIGN.md section 9): the
// library API the server and `h2o bench --concurrency` share.
//
// Submit() queues a request (a prompt, its sequence options with their KV
// policy, sampling, a token limit and a streaming callback). Each Step()
//   1. admits queued requests in arrival order while their KV reservation
//      fits the limit: a request reserves what its cache allocates, which
//      is all it can ever need (full: its context; an evicting policy:
//      budget + chunk), so a running sequence never runs out. The queue is
//      first in, first out: a request that does not fit yet holds back the
//      ones behind it, so none starves;
//   2. packs one batch under the per-step token budget: the next token of
//      every decoding sequence first (those a step had no room for ahead of
//      the others), then prompt chunks of the prefilling ones, oldest
//      first. A prompt goes in whole chunks of its sequence's max_chunk
//      (at most the step budget; the last one shorter), never cut to fit:
//      an evicting cache's chunk boundaries decide what it keeps, and a
//      request must keep what it keeps alone. A chunk that does not fit
//      waits, and the next step reserves room for the oldest one first;
//   3. runs it as one Engine::Forward, samples each decoding sequence's next
//      token, streams it to the request's callback, and finishes requests
//      (end of generation, token limit, stop string, the callback asking
//      to stop: GenerationState decides as it does for `h2o generate`),
//      freeing their KV at once.
// Cancel() removes a queued request or finishes a running one (its KV is
// freed at the next step boundary, before anything else is admitted).
//
// Threading: Submit, Cancel and Stats may be called from any thread; Step
// runs on one driver thread, which is also where callbacks run.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "runtime/engine.h"
#include "runtime/generate.h"
#include "runtime/prompt_cache.h"
#include "runtime/sequence.h"
#include "runtime/state_dir.h"

namespace h2o {

// Why a request ended.
enum class FinishReason {
  kEndOfGeneration,  // the model produced an end-of-generation token
  kLength,           // max_tokens generated, or the context is full
  kStopped,          // the text reached a stop string, or the callback asked to stop
  kCancelled,        // Cancel()
  kError,            // the forward pass failed (message in the event)
};

const char* FinishReasonName(FinishReason reason);  // "stop", "length", ...

// What a request's callback is told, on the driver thread.
struct TokenEvent {
  uint64_t request_id = 0;
  int32_t token = -1;             // -1 in the final event
  std::span<const float> logits;  // the distribution it was sampled from
  int32_t n_generated = 0;        // tokens so far, this one included
  // The text a client may now see: this token's, less what could still
  // begin a stop string (GenerationState); the final event releases what
  // was held back. Empty without a tokenizer. Valid during the callback.
  std::string_view text;
  bool finished = false;          // the last event of the request
  FinishReason reason = FinishReason::kLength;
  std::string error;  // reason kError
  // Final event only: the bytes the request's KV cache held and the tokens
  // its policy evicted.
  size_t kv_bytes = 0;
  int64_t evictions = 0;
  int32_t cached_tokens = 0;  // final event: prompt tokens resumed from the prompt cache
  size_t kept_bytes = 0;      // final event: bytes of its states the prompt cache kept
  // Final event: the tokens of the state kept where it stopped (its prompt
  // and the generated tokens fed back), 0 when none was kept; what
  // Scheduler::SaveKept names it by.
  int32_t kept_tokens = 0;
};

struct Request {
  std::vector<int32_t> prompt;  // at least one token
  SequenceOptions sequence;     // KV policy (resolved), context, chunk, KV type
  // Sampling, max_tokens (at least 1), stop strings and whether an
  // end-of-generation token ends the request: the stop logic of `h2o
  // generate`, one GenerationState per request.
  GenerateOptions generation;
  // The vocabulary of the text, the stop strings and the end-of-generation
  // ids; may be null: then only max_tokens ends a request, events carry no
  // text, and stop strings are refused. Must outlive the request.
  const Tokenizer* tokenizer = nullptr;
  // Whether the request may resume from, and leaves its states in, the
  // prompt cache (llama-server's cache_prompt).
  bool cache_prompt = true;
  // The prompt's first tokens that other requests begin with too (a chat's
  // system prompt; 0: none): they enter as pieces of their own, so every
  // request with them evicts alike, and the state after them is kept in
  // the prompt cache for the others (never superseded by one
  // conversation's later turns).
  int32_t shared_prefix = 0;
  // Called for each generated token (not for an end-of-generation token)
  // and once more when the request finishes; returning false from a token
  // event stops the request (kStopped: a client gone). May be empty.
  std::function<bool(const TokenEvent&)> on_event;
  // Called on the driver thread with the request's sequence after each
  // step that fed it, and once more just before its cache is freed (final:
  // true; before the final on_event). The only safe moment for another
  // thread's view of the cache: copy what it needs here. May be empty.
  std::function<void(const Sequence& sequence, bool final)> on_cache;
};

struct SchedulerOptions {
  size_t kv_memory_bytes = size_t{1} << 30;  // --kv-mem: the most all reservations may sum to
  int32_t max_queue = 64;                    // waiting requests beyond this are refused
  int32_t max_running = 0;  // sequences at once (0: as many as the KV memory holds)
  // Tokens per forward pass, all sequences together (at most the engine's
  // max_batch_tokens; 0: that).
  int32_t step_tokens = 0;
  // The prompt cache (runtime/prompt_cache.h): at most this many bytes of
  // finished requests' states, kept only in KV memory no running sequence
  // reserved, and dropped (oldest first) as admission needs it. 0: off.
  size_t prompt_cache_bytes = 0;
  // The prompt cache's disk tier (runtime/state_dir.h): states dropped
  // from RAM are written there and found again; may be null. Must outlive
  // the scheduler.
  StateDir* state_dir = nullptr;
};

struct SchedulerStats {
  int32_t queued = 0;
  int32_t running = 0;
  size_t kv_reserved_bytes = 0;  // sum of the running sequences' reservations
  size_t kv_limit_bytes = 0;
  int64_t tokens_generated = 0;  // since the scheduler was made
  int64_t requests_finished = 0;
  int64_t evictions = 0;  // tokens evicted from finished and running caches
  size_t prompt_cache_bytes = 0;  // states kept in the prompt cache
  int32_t prompt_cache_entries = 0;
  int64_t prompt_cache_hits = 0;           // requests resumed from a kept state
  int64_t prompt_cache_tokens_reused = 0;  // prompt tokens those did not feed
  int64_t prompt_cache_evictions = 0;      // states dropped for room
  int64_t prompt_cache_shared_kept = 0;    // shared prefixes' states kept
};

// One running request as Scheduler::Slots() reports it (the server's
// /slots): where it is, not what it says.
struct SlotInfo {
  uint64_t request_id = 0;
  int32_t n_ctx = 0;
  int32_t n_prompt = 0;
  int32_t n_prompt_fed = 0;  // resumed from the prompt cache included
  int32_t n_generated = 0;
  int32_t max_tokens = 0;
  int32_t cached_tokens = 0;
  int32_t n_past = 0;
  size_t kv_reserved_bytes = 0;
  size_t kv_held_bytes = 0;  // the K/V rows its cache holds now
  std::string kv;            // its policy (KvPlan::Describe)
};

class Scheduler {
 public:
  // `engine` must outlive the scheduler and be driven only through it.
  Scheduler(Engine& engine, const SchedulerOptions& options);
  ~Scheduler();

  // Queues a request and returns its id. Errors (nothing queued): an empty
  // prompt, max_tokens < 1, stop strings without a tokenizer, bad sequence
  // options, a prompt + max_tokens past the context,
  // a reservation larger than the whole KV limit (it could never run), a
  // full queue.
  Result<uint64_t> Submit(Request request);

  // Ends request `id` (queued or running) with kCancelled; unknown or
  // finished ids are ignored.
  void Cancel(uint64_t id);

  // One scheduling step (admit, batch, forward, sample, stream, finish).
  // Returns false when there was nothing to do (no request queued or
  // running).
  bool Step();

  SchedulerStats Stats() const;
  // The running requests as of the last step boundary, oldest first.
  std::vector<SlotInfo> Slots() const;

  // The prompt cache and its disk tier; any thread. A named save holds the
  // cache's lock while it writes, so the driver waits for it.
  //
  // Writes every state the cache holds to the disk tier (at shutdown, so
  // a restart finds them); returns how many. 0 without a disk tier.
  size_t PersistPromptCache();
  // Writes the kept state of exactly `tokens` (a finished request's, see
  // TokenEvent::kept_tokens) as the disk tier's save `name`; returns the
  // bytes written. Errors: no disk tier, a bad name, no such state kept.
  Result<size_t> SaveKept(std::span<const int32_t> tokens, const std::string& name);
  // Reads save `name` into the prompt cache, where a request that begins
  // with its tokens resumes from it; returns its tokens' count and the
  // file's bytes.
  // nullopt: no such save. Errors: no disk tier, a bad name,
  // a file refused (state_file.h), larger than the cache's room.
  struct Restored {
    size_t n_tokens = 0;
    size_t bytes = 0;
  };
  Result<std::optional<Restored>> RestoreSaved(const std::string& name);
  // Drops the kept states (RAM and disk) whose tokens begin `tokens`'s, up
  // to all of them: a finished request's states. Returns how many.
  size_t EraseKept(std::span<const int32_t> tokens);

  // What the last Step() fed (driver thread): decode tokens (one per
  // decoding sequence) and prompt tokens.
  struct StepTokens {
    int32_t decode = 0;
    int32_t prefill = 0;
  };
  StepTokens last_step() const { return last_step_; }

 private:
  struct Running;

  void ApplyCancellations();
  void Admit();
  void Finish(Running& r, FinishReason reason, const std::string& error = "");
  int64_t CacheEvictions(const Sequence& s) const;
  // The next prompt chunk of a prefilling request: its sequence's chunk (at
  // most the step's tokens), or what is left of the prompt.
  int32_t ChunkLength(const Running& r) const;
  // Fills batch_ (and batch_owner_, last_step_) with this step's decode
  // tokens and prompt chunks.
  void PlanBatch();
  // After the forward pass: each sequence past its prompt samples its next
  // token, hands it to its request, and finishes or goes on. Returns the
  // tokens generated.
  int64_t TakeTokens();
  // Hands a sampled token (nullopt: the generation ended) to its request
  // and finishes it or sets its next token. Returns the tokens generated.
  int64_t Emit(Running& r, std::optional<int32_t> sampled);
  // The prompt cache: keeps r's state after its prompt and its first
  // n_generated_fed tokens; resumes a just admitted r from the longest
  // kept prefix of its prompt.
  bool KeepState(Running& r, size_t n_generated_fed);  // whether it was kept
  void KeepSharedPrefix(Running& r);  // r's state right after its shared prefix
  void SpillEvicted();  // what the RAM tier dropped, to the disk tier; takes mu_
  void Resume(Running& r);
  size_t PromptCacheLimit() const;
  void UpdateCacheStats();  // under mu_
  void UpdateSlots();       // driver thread; takes mu_

  Engine& engine_;
  SchedulerOptions options_;
  int32_t step_tokens_;

  mutable std::mutex mu_;  // guards queue_, cancelled_, stats counters read by Stats()
  struct Queued {
    uint64_t id;
    Request request;
    size_t reservation;
  };
  std::deque<Queued> queue_;
  std::vector<uint64_t> cancelled_;
  uint64_t next_id_ = 1;
  SchedulerStats stats_;
  std::vector<SlotInfo> slots_;
  PromptCache prompt_cache_;  // guarded by mu_ (Stats reads its sizes)

  // Driver thread only.
  std::vector<std::unique_ptr<Running>> running_;
  std::vector<BatchItem> batch_;
  std::vector<Running*> batch_owner_;
  // [batch_]: each item's next token; nullopt while prefilling or where it
  // ended on an end-of-generation token.
  std::vector<std::optional<int32_t>> sampled_;
  // Whether the last step fed no prompt while one was waiting: the next
  // reserves room for the oldest one's chunk.
  bool prompt_waited_ = false;
  StepTokens last_step_;
};

}  // namespace h2o
