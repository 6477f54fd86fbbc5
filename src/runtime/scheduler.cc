#include "runtime/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "runtime/scheduler_running.h"

namespace h2o {

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kEndOfGeneration:
    case FinishReason::kStopped:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "error";
}

Scheduler::Scheduler(Engine& engine, const SchedulerOptions& options)
    : engine_(engine), options_(options) {
  prompt_cache_.set_keep_evicted(options.state_dir != nullptr);
  step_tokens_ = options.step_tokens > 0 ? std::min(options.step_tokens, engine.max_batch_tokens())
                                         : engine.max_batch_tokens();
  stats_.kv_limit_bytes = options.kv_memory_bytes;
}

Scheduler::~Scheduler() = default;

Result<uint64_t> Scheduler::Submit(Request request) {
  if (request.prompt.empty()) return Status::Error("the prompt has no tokens");
  const int32_t max_tokens = request.generation.max_tokens;
  if (max_tokens < 1) {
    return Status::Error(fmt::format("max_tokens must be at least 1, got {}", max_tokens));
  }
  if (request.tokenizer == nullptr &&
      std::any_of(request.generation.stop.begin(), request.generation.stop.end(),
                  [](const std::string& stop) { return !stop.empty(); })) {
    return Status::Error("stop strings need the model's vocabulary");
  }
  const int32_t n_ctx =
      request.sequence.n_ctx > 0 ? request.sequence.n_ctx : engine_.model().hparams().n_ctx_train;
  if (!request.sequence.kv_pos_shift &&
      static_cast<int64_t>(request.prompt.size()) + max_tokens > n_ctx) {
    return Status::Error(fmt::format("{} prompt tokens + {} to generate exceed the context of {}",
                                     request.prompt.size(), max_tokens, n_ctx));
  }
  H2O_ASSIGN_OR_RETURN(const size_t reservation, engine_.SequenceKvBytes(request.sequence));
  if (reservation > options_.kv_memory_bytes) {
    return Status::Error(fmt::format(
        "the request's KV cache ({} bytes) is larger than the whole KV memory limit ({} bytes)",
        reservation, options_.kv_memory_bytes));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int32_t>(queue_.size()) >= options_.max_queue) {
    return Status::Error(StatusCode::kUnavailable,
                         fmt::format("the queue is full ({} requests waiting)", queue_.size()));
  }
  const uint64_t id = next_id_++;
  queue_.push_back({id, std::move(request), reservation});
  stats_.queued = static_cast<int32_t>(queue_.size());
  return id;
}

void Scheduler::Cancel(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_.push_back(id);
}

SchedulerStats Scheduler::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::vector<SlotInfo> Scheduler::Slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_;
}

void Scheduler::UpdateSlots() {
  std::vector<SlotInfo> slots;
  slots.reserve(running_.size());
  for (const std::unique_ptr<Running>& r : running_) {
    if (r->done || !r->sequence) continue;
    const Sequence& s = *r->sequence;
    slots.push_back({.request_id = r->id,
                     .n_ctx = s.n_ctx(),
                     .n_prompt = static_cast<int32_t>(r->request.prompt.size()),
                     .n_prompt_fed = static_cast<int32_t>(r->prompt_fed),
                     .n_generated = r->generated(),
                     .max_tokens = r->request.generation.max_tokens,
                     .cached_tokens = r->cached_tokens,
                     .n_past = s.n_past(),
                     .kv_reserved_bytes = r->reservation,
                     .kv_held_bytes = s.cache().HeldBytes(),
                     .kv = s.kv_plan_text()});
  }
  std::lock_guard<std::mutex> lock(mu_);
  slots_ = std::move(slots);
}

int64_t Scheduler::CacheEvictions(const Sequence& s) const {
  // Every token enters every (layer, KV head); what is no longer there was
  // evicted.
  const KvCache& cache = s.cache();
  int64_t evicted = 0;
  for (int32_t l = 0; l < cache.config().n_layer; ++l) {
    for (int32_t g = 0; g < cache.config().n_head_kv; ++g) {
      evicted += s.n_past() - cache.count(l, g);
    }
  }
  return evicted;
}

void Scheduler::Finish(Running& r, FinishReason reason, const std::string& error) {
  r.done = true;
  r.state.End(GenerationEnd::kLength);  // releases held-back text; no-op if it ended itself
  const int64_t evicted = CacheEvictions(*r.sequence);
  TokenEvent event;
  event.request_id = r.id;
  event.n_generated = r.generated();
  event.text = r.NewText();
  event.cached_tokens = r.cached_tokens;
  event.finished = true;
  event.reason = reason;
  event.error = error;
  event.kv_bytes = r.reservation;
  event.evictions = evicted;
  if (r.request.on_cache && r.sequence) r.request.on_cache(*r.sequence, /*final=*/true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.kv_reserved_bytes -= r.reservation;
    stats_.requests_finished += 1;
    stats_.evictions += evicted;
  }
  // Where it stopped is kept for a next turn (in the memory it just freed).
  if (reason != FinishReason::kError && reason != FinishReason::kCancelled &&
      KeepState(r, static_cast<size_t>(r.fed_generated))) {
    event.kept_tokens = static_cast<int32_t>(r.request.prompt.size()) + r.fed_generated;
  }
  event.kept_bytes = r.kept_bytes;
  // The cache is freed and the stats say so before the request hears it
  // ended: whoever it tells (a server's client) then sees the memory free.
  r.sequence.reset();
  if (r.request.on_event) r.request.on_event(event);
}

void Scheduler::ApplyCancellations() {
  std::vector<uint64_t> ids;
  std::vector<Queued> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ids.swap(cancelled_);
    for (const uint64_t id : ids) {
      auto it =
          std::find_if(queue_.begin(), queue_.end(), [id](const Queued& q) { return q.id == id; });
      if (it != queue_.end()) {
        dropped.push_back(std::move(*it));
        queue_.erase(it);
      }
    }
    stats_.queued = static_cast<int32_t>(queue_.size());
  }
  for (Queued& q : dropped) {
    TokenEvent event;
    event.request_id = q.id;
    event.finished = true;
    event.reason = FinishReason::kCancelled;
    if (q.request.on_event) q.request.on_event(event);
    std::lock_guard<std::mutex> lock(mu_);
    stats_.requests_finished += 1;
  }
  for (auto& r : running_) {
    if (!r->done && std::find(ids.begin(), ids.end(), r->id) != ids.end()) {
      Finish(*r, FinishReason::kCancelled);
    }
  }
}

void Scheduler::Admit() {
  for (;;) {
    Queued q;
    bool spill = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) return;
      if (options_.max_running > 0 &&
          static_cast<int32_t>(running_.size()) >= options_.max_running) {
        return;
      }
      // Kept states give way to a request: the prompt cache only ever
      // holds memory no running sequence reserved.
      const size_t need = stats_.kv_reserved_bytes + queue_.front().reservation;
      if (need > options_.kv_memory_bytes) return;
      prompt_cache_.ShrinkTo(options_.kv_memory_bytes - need);
      UpdateCacheStats();
      spill = options_.state_dir != nullptr;
      q = std::move(queue_.front());
      queue_.pop_front();
      stats_.queued = static_cast<int32_t>(queue_.size());
      stats_.kv_reserved_bytes += q.reservation;
    }
    // Its reservation is counted from here on, so back it now: a page a
    // decode step first writes would stall every running sequence.
    if (spill) SpillEvicted();
    q.request.sequence.commit_kv_rows = true;
    auto sequence = engine_.NewSequence(q.request.sequence);
    auto running = std::make_unique<Running>(
        q.id, std::move(q.request), q.reservation,
        sequence.ok() ? std::move(sequence).value() : std::unique_ptr<Sequence>());
    if (running->sequence == nullptr) {
      // Submit checked the options, so this is unexpected; report it.
      TokenEvent event;
      event.request_id = q.id;
      event.finished = true;
      event.reason = FinishReason::kError;
      event.error = sequence.status().message();
      if (running->request.on_event) running->request.on_event(event);
      std::lock_guard<std::mutex> lock(mu_);
      stats_.kv_reserved_bytes -= q.reservation;
      stats_.requests_finished += 1;
      continue;
    }
    running_.push_back(std::move(running));
    Resume(*running_.back());
  }
}

int32_t Scheduler::ChunkLength(const Running& r) const {
  // A shared prefix ends a piece.
  const auto shared = static_cast<size_t>(std::max(0, r.request.shared_prefix));
  const size_t left = (r.prompt_fed < shared ? std::min(shared, r.request.prompt.size())
                                             : r.request.prompt.size()) -
                      r.prompt_fed;
  return static_cast<int32_t>(std::min(
      {left, static_cast<size_t>(r.sequence->max_chunk()), static_cast<size_t>(step_tokens_)}));
}

void Scheduler::PlanBatch() {
  // Decode tokens first (one per decoding sequence), then prompt chunks.
  // A prompt goes in whole chunks of its sequence's size (the last one
  // shorter), never cut to what a step has left: where a cache evicts after
  // each pass, a chunk's boundaries decide what it keeps, and a sequence
  // must keep what it keeps alone. So a chunk that does not fit waits, and
  // the next step reserves room for the oldest prompt before the decode
  // tokens; decode tokens a step has no room for go first in the next one.
  batch_.clear();
  batch_owner_.clear();
  last_step_ = {};
  Running* oldest_prompt = nullptr;
  for (auto& r : running_) {
    if (r->prefilling()) {
      oldest_prompt = r.get();
      break;
    }
  }
  int32_t budget = step_tokens_;
  if (prompt_waited_ && oldest_prompt != nullptr) budget -= ChunkLength(*oldest_prompt);
  // Tokens that waited a step first, then the others.
  for (auto& r : running_) r->decode_waited_before = r->decode_waited;
  for (const bool waited : {true, false}) {
    for (auto& r : running_) {
      if (r->prefilling() || r->decode_waited_before != waited) continue;
      r->decode_waited = budget < 1;
      if (r->decode_waited) continue;
      batch_.push_back({r->sequence.get(), std::span<const int32_t>(&r->next_token, 1)});
      batch_owner_.push_back(r.get());
      budget -= 1;
      last_step_.decode += 1;
    }
  }
  if (prompt_waited_ && oldest_prompt != nullptr) budget += ChunkLength(*oldest_prompt);
  for (auto& r : running_) {
    if (!r->prefilling()) continue;
    const size_t len = static_cast<size_t>(ChunkLength(*r));
    if (len > static_cast<size_t>(budget)) break;  // oldest first: none jumps the queue
    const bool last = len == r->request.prompt.size() - r->prompt_fed;
    batch_.push_back({r->sequence.get(),
                      std::span<const int32_t>(r->request.prompt).subspan(r->prompt_fed, len),
                      LogitsFor::kLastToken, last});
    batch_owner_.push_back(r.get());
    budget -= static_cast<int32_t>(len);
    last_step_.prefill += static_cast<int32_t>(len);
  }
  prompt_waited_ = oldest_prompt != nullptr && last_step_.prefill == 0;
}

namespace {

FinishReason FinishReasonOf(GenerationEnd end) {
  switch (end) {
    case GenerationEnd::kEndOfGeneration:
      return FinishReason::kEndOfGeneration;
    case GenerationEnd::kStopString:
      return FinishReason::kStopped;
    case GenerationEnd::kLength:
      return FinishReason::kLength;
  }
  return FinishReason::kLength;
}

}  // namespace

int64_t Scheduler::TakeTokens() {
  // Where the prompt is done or a token was fed, the next token, sampled on
  // the engine's threads (each sequence has its own GenerationState): a
  // 32-sequence step's greedy picks scan 32 x 32000 logits.
  sampled_.resize(batch_.size());
  auto sample = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Running& r = *batch_owner_[i];
      sampled_[i] = r.prefilling() ? std::nullopt : r.state.Next(r.sequence->last_logits());
    }
  };
  engine_.ParallelFor(static_cast<int64_t>(batch_.size()), sample);
  int64_t generated = 0;
  for (size_t i = 0; i < batch_.size(); ++i) {
    Running& r = *batch_owner_[i];
    if (r.prefilling()) continue;  // more prompt chunks to go
    generated += Emit(r, sampled_[i]);
  }
  return generated;
}

int64_t Scheduler::Emit(Running& r, std::optional<int32_t> sampled) {
  if (!sampled) {
    Finish(r, FinishReasonOf(r.state.generation().finish_reason));
    return 0;
  }
  const int32_t token = *sampled;
  TokenEvent event;
  event.request_id = r.id;
  event.token = token;
  event.logits = r.sequence->last_logits();
  event.n_generated = r.generated();
  event.text = r.NewText();
  const bool go_on = !r.request.on_event || r.request.on_event(event);
  if (!go_on) {
    Finish(r, FinishReason::kStopped);
  } else if (r.state.done()) {
    Finish(r, FinishReasonOf(r.state.generation().finish_reason));
  } else if (!r.sequence->HasRoomFor(1)) {
    Finish(r, FinishReason::kLength);
  } else {
    r.next_token = token;
  }
  return 1;
}

bool Scheduler::Step() {
  ApplyCancellations();
  // Finished sequences leave before anything new is admitted, and again
  // after: one resumed in Admit may have finished there.
  auto leave_done = [this] {
    std::erase_if(running_, [](const std::unique_ptr<Running>& r) { return r->done; });
  };
  leave_done();
  Admit();
  leave_done();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.running = static_cast<int32_t>(running_.size());
  }
  if (running_.empty()) {
    last_step_ = {};
    UpdateSlots();
    return false;
  }

  PlanBatch();
  if (batch_.empty()) return true;

  if (Status s = engine_.Forward(batch_); !s.ok()) {
    for (Running* r : batch_owner_) Finish(*r, FinishReason::kError, s.message());
    return true;
  }
  for (size_t i = 0; i < batch_.size(); ++i) {
    Running& r = *batch_owner_[i];
    if (!r.prefilling()) {
      r.fed_generated += 1;
      continue;
    }
    const size_t before = r.prompt_fed;
    r.prompt_fed += batch_[i].tokens.size();
    const auto shared = static_cast<size_t>(std::max(0, r.request.shared_prefix));
    if (before < shared && r.prompt_fed == shared && r.prefilling()) KeepSharedPrefix(r);
    if (!r.prefilling()) (void)KeepState(r, 0);  // the prompt's end: a regenerate starts here
  }
  const int64_t generated = TakeTokens();
  for (Running* r : batch_owner_) {
    if (!r->done && r->request.on_cache) r->request.on_cache(*r->sequence, /*final=*/false);
  }
  UpdateSlots();
  std::lock_guard<std::mutex> lock(mu_);
  stats_.tokens_generated += generated;
  return true;
}

}  // namespace h2o
