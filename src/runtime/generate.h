// Generating from a prompt: feed it, then sample a token and feed it back,
// one at a time, until an end-of-generation token, a stop string or the
// token limit. The one loop every caller shares: `h2o generate` (one
// sequence, streaming its text), eval's summarization (every policy of an
// article in lockstep on one engine), and the scheduler's decode steps
// (GenerationState, one per running sequence).
//
// A sequence's tokens depend only on its prompt, chunk, KV policy and
// options, never on the other sequences of a batch (the engine's batch
// parity), so a lockstep run gives each sequence what it gives alone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "grammar/grammar.h"
#include "runtime/engine.h"
#include "runtime/grammar_constraint.h"
#include "runtime/sampler.h"
#include "runtime/sequence.h"
#include "runtime/stop_text.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

struct GenerateOptions {
  int32_t max_tokens = 128;  // most tokens to generate; 0: feed the prompt only
  // The generation ends once its text contains one of these, and the text
  // is cut where the earliest begins (the ids keep the token that completed
  // it). Empty strings are ignored. Needs a tokenizer.
  std::vector<std::string> stop;
  // End at the tokenizer's end-of-generation tokens (not kept); false
  // generates through them (--ignore-eos).
  bool stop_at_end = true;
  SamplerOptions sampling;
  // Only text this grammar allows is generated (runtime/grammar_constraint.h);
  // null: any. Needs a tokenizer.
  std::shared_ptr<const Grammar> grammar;
};

// Why a generation ended. (The scheduler's FinishReason also covers what
// only a server has: cancellation and failed forwards.)
enum class GenerationEnd {
  kLength,           // max_tokens generated
  kEndOfGeneration,  // an end-of-generation token was sampled
  kStopString,       // the text reached a stop string
};

// As OpenAI's finish_reason: "length", or "stop" for the other two.
const char* GenerationEndName(GenerationEnd end);

struct Generation {
  std::vector<int32_t> ids;      // generated tokens (not the prompt, not the end token)
  std::vector<double> logprobs;  // log p of each generated token (untempered)
  // The generated pieces joined (a leading "▁" is a space), cut before the
  // first stop string; empty without a tokenizer.
  std::string text;
  GenerationEnd finish_reason = GenerationEnd::kLength;
};

// One sequence's sampler and stop conditions, a token at a time: its driver
// feeds the prompt, then calls Next with the logits after each fed token
// and feeds the token it returns, until done(). The one stop logic of
// `h2o generate`, eval and the scheduler (hence the server). States are
// independent: distinct ones may run Next on different threads.
class GenerationState {
 public:
  // `tokenizer` may be null: then nothing ends a generation but max_tokens,
  // and there is no text (stop strings are then a programming error).
  // Done at once when max_tokens <= 0. The tokenizer must outlive this.
  GenerationState(const GenerateOptions& options, const Tokenizer* tokenizer);

  // Samples from the logits that follow the last fed token. Returns the
  // token it generated, or nullopt when it sampled an end-of-generation
  // token or was already done. Unless done() afterwards, the caller feeds
  // generation().ids.back() next.
  std::optional<int32_t> Next(std::span<const float> logits);
  // Tokens fed to the sequence that the sampler has not seen (the prompt,
  // a chat turn), for the repeat penalty.
  void Saw(std::span<const int32_t> tokens);

  // Ends the generation now (the driver ran out of room, or was told to
  // stop) unless it already ended; the text held back is released.
  void End(GenerationEnd end);

  bool done() const { return done_; }
  // While running, generation().text is the text a client may already see:
  // bytes that could still begin a stop string, or an unfinished UTF-8
  // character, are held back until a later piece decides (StopText).
  const Generation& generation() const { return out_; }
  Generation Take() { return std::move(out_); }

 private:
  GenerateOptions options_;
  const Tokenizer* tokenizer_;
  Sampler sampler_;
  StopText stop_;
  std::optional<GrammarConstraint> grammar_;
  std::vector<float> masked_;  // the logits the grammar allows, reused
  bool done_ = false;
  Generation out_;
};

// One sequence's part of a lockstep generation.
struct GenerateJob {
  Sequence* sequence = nullptr;
  std::span<const int32_t> prompt;  // must outlive the call
  GenerateOptions options;
  // Prompt tokens per forward pass; 0: the sequence's max_chunk (at most).
  int32_t chunk = 0;
  // A cache compressed once, as kvpress evaluates: after `compress_after`
  // prompt tokens (chunks end there), `then` continues `sequence`
  // (Sequence::ContinueFrom) and takes the rest of the prompt and the
  // generation, so what `sequence` kept is all that is kept of them and
  // nothing later is evicted. Null: `sequence` takes everything.
  Sequence* then = nullptr;
  size_t compress_after = 0;
};

// Optional hooks, called on the driving thread as the run goes.
struct GenerateCallbacks {
  // Job `job`'s prompt has been fed; its first token is sampled next.
  std::function<void(size_t job)> on_prompt_fed;
  // Job `job` generated `id` (streaming: called before anything is fed
  // after it).
  std::function<void(size_t job, int32_t id)> on_token;
};

// Resets every job's sequence, then runs the jobs together on `engine`:
// each forward pass takes, for every unfinished job in order, its next
// prompt chunk (up to its chunk; logits only after the last one) or the
// token it generated last, as many as fit in the engine's batch (the rest
// wait for the next pass). A job leaves the batch when it
// finishes. Returns one Generation per job, in order. Errors: a job with
// an empty prompt (before anything runs), or those of Engine::Forward (a
// bad id, prompt + max_tokens past a context; the sequences are then
// part-fed). Sequences must be distinct and made by `engine`.
Result<std::vector<Generation>> GenerateLockstep(Engine& engine, std::span<const GenerateJob> jobs,
                                                 const Tokenizer* tokenizer,
                                                 const GenerateCallbacks& callbacks = {});

// One sequence alone: GenerateLockstep with one job.
Result<Generation> Generate(Engine& engine, Sequence& sequence, std::span<const int32_t> prompt,
                            const GenerateOptions& options, const Tokenizer* tokenizer,
                            const GenerateCallbacks& callbacks = {});

}  // namespace h2o
