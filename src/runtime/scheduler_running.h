// The scheduler's record of one admitted request, shared by its two
// halves (scheduler.cc: admission, batching, tokens; scheduler_prompt_cache.cc:
// keeping and resuming states). Private to the scheduler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "runtime/scheduler.h"

namespace h2o {

// A request that holds a sequence: prefilling its prompt, then decoding.
struct Scheduler::Running {
  uint64_t id;
  Request request;
  size_t reservation;
  std::unique_ptr<Sequence> sequence;
  GenerationState state;
  size_t prompt_fed = 0;
  size_t text_sent = 0;               // bytes of state's text already in events
  int32_t fed_generated = 0;          // generated tokens fed back (in the cache)
  int32_t cached_tokens = 0;          // prompt tokens resumed from the prompt cache
  size_t kept_bytes = 0;              // of its states the prompt cache took
  int32_t next_token = -1;            // sampled, to be fed next step
  bool decode_waited = false;         // its token did not fit the last step
  bool decode_waited_before = false;  // decode_waited as the step began
  bool done = false;

  Running(uint64_t id, Request request, size_t reservation, std::unique_ptr<Sequence> sequence)
      : id(id),
        request(std::move(request)),
        reservation(reservation),
        sequence(std::move(sequence)),
        state(this->request.generation, this->request.tokenizer) {
    state.Saw(this->request.prompt);
  }
  bool prefilling() const { return prompt_fed < request.prompt.size(); }
  int32_t generated() const { return static_cast<int32_t>(state.generation().ids.size()); }
  // The text since the last event.
  std::string_view NewText() {
    const std::string_view text = std::string_view(state.generation().text).substr(text_sent);
    text_sent += text.size();
    return text;
  }
};

}  // namespace h2o
