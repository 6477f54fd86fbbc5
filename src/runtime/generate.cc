#include "runtime/generate.h"

#include <algorithm>

#include "runtime/log_softmax.h"

namespace h2o {

const char* GenerationEndName(GenerationEnd end) {
  return end == GenerationEnd::kLength ? "length" : "stop";
}

GenerationState::GenerationState(const GenerateOptions& options, const Tokenizer* tokenizer)
    : options_(options), tokenizer_(tokenizer), sampler_(options.sampling), stop_(options.stop) {
  H2O_CHECK(tokenizer_ != nullptr ||
            std::all_of(options_.stop.begin(), options_.stop.end(),
                        [](const std::string& stop) { return stop.empty(); }));
  H2O_CHECK(tokenizer_ != nullptr || options_.grammar == nullptr);
  if (options_.grammar) grammar_.emplace(options_.grammar, *tokenizer_);
  if (options_.max_tokens <= 0) End(GenerationEnd::kLength);
}

void GenerationState::End(GenerationEnd end) {
  if (done_) return;
  done_ = true;
  out_.finish_reason = end;
  out_.text += stop_.Finish();
}

std::optional<int32_t> GenerationState::Next(std::span<const float> logits) {
  if (done_) return std::nullopt;
  std::span<const float> allowed = logits;
  if (grammar_) {
    // A complete sentence, or no token that continues it: the end.
    if (grammar_->MustEnd() || !grammar_->Mask(logits, masked_)) {
      End(GenerationEnd::kEndOfGeneration);
      return std::nullopt;
    }
    allowed = masked_;
  }
  const int32_t id = sampler_.Sample(allowed);
  if (grammar_) grammar_->Accept(id);
  if (options_.stop_at_end && tokenizer_ != nullptr && tokenizer_->IsEndOfGeneration(id)) {
    End(GenerationEnd::kEndOfGeneration);
    return std::nullopt;
  }
  sampler_.Accept(id);
  out_.ids.push_back(id);
  out_.logprobs.push_back(-NegLogSoftmax(logits, id));
  if (tokenizer_ != nullptr) {
    out_.text += stop_.Add(tokenizer_->TokenToPiece(id));
    if (stop_.stopped()) {
      End(GenerationEnd::kStopString);
      return id;
    }
  }
  if (static_cast<int64_t>(out_.ids.size()) >= options_.max_tokens) End(GenerationEnd::kLength);
  return id;
}

void GenerationState::Saw(std::span<const int32_t> tokens) {
  for (const int32_t id : tokens) sampler_.Accept(id);
}

Result<std::vector<Generation>> GenerateLockstep(Engine& engine, std::span<const GenerateJob> jobs,
                                                 const Tokenizer* tokenizer,
                                                 const GenerateCallbacks& callbacks) {
  for (const GenerateJob& job : jobs) {
    H2O_CHECK(job.sequence != nullptr);
    H2O_CHECK(job.then == nullptr ||
              (job.compress_after > 0 && job.compress_after <= job.prompt.size()));
    if (job.prompt.empty()) return Status::Error("the prompt has no tokens");
  }
  const size_t n = jobs.size();
  std::vector<GenerationState> states;
  states.reserve(n);
  std::vector<size_t> fed(n, 0);   // prompt tokens fed
  std::vector<int32_t> next(n);    // the token each decoding job feeds next
  std::vector<bool> live(n, true);
  std::vector<Sequence*> current(n);  // the sequence each job feeds now
  for (size_t j = 0; j < n; ++j) {
    states.emplace_back(jobs[j].options, tokenizer);
    states.back().Saw(jobs[j].prompt);
    jobs[j].sequence->Reset();
    current[j] = jobs[j].sequence;
  }
  std::vector<BatchItem> batch;
  std::vector<size_t> batch_job;
  batch.reserve(n);
  batch_job.reserve(n);
  for (size_t n_live = n; n_live > 0;) {
    batch.clear();
    batch_job.clear();
    int64_t rows = 0;
    for (size_t j = 0; j < n; ++j) {
      if (!live[j]) continue;
      const GenerateJob& job = jobs[j];
      BatchItem item{current[j], std::span<const int32_t>(&next[j], 1)};
      if (fed[j] < job.prompt.size()) {
        const int32_t max_chunk = current[j]->max_chunk();
        const auto chunk = static_cast<size_t>(job.chunk > 0 ? std::min(job.chunk, max_chunk)
                                                             : max_chunk);
        const bool compressing = job.then != nullptr && fed[j] < job.compress_after;
        const size_t end = compressing ? job.compress_after : job.prompt.size();
        const size_t len = std::min(chunk, end - fed[j]);
        item.tokens = job.prompt.subspan(fed[j], len);
        item.want_logits = fed[j] + len == job.prompt.size();
      }
      if (rows + static_cast<int64_t>(item.tokens.size()) > engine.max_batch_tokens()) continue;
      rows += static_cast<int64_t>(item.tokens.size());
      batch.push_back(item);
      batch_job.push_back(j);
    }
    // A sequence's chunk never exceeds the engine's batch, so the first
    // live job always fits.
    H2O_CHECK(!batch.empty());
    H2O_RETURN_IF_ERROR(engine.Forward(batch));
    for (size_t k = 0; k < batch.size(); ++k) {
      const size_t j = batch_job[k];
      const Sequence* fed_sequence = current[j];
      if (fed[j] < jobs[j].prompt.size()) {
        fed[j] += batch[k].tokens.size();
        if (jobs[j].then != nullptr && fed[j] == jobs[j].compress_after) {
          jobs[j].then->ContinueFrom(*jobs[j].sequence);
          current[j] = jobs[j].then;
        }
        if (fed[j] < jobs[j].prompt.size()) continue;
        if (callbacks.on_prompt_fed) callbacks.on_prompt_fed(j);
      }
      const std::optional<int32_t> id = states[j].Next(fed_sequence->last_logits());
      if (id && callbacks.on_token) callbacks.on_token(j, *id);
      if (states[j].done()) {
        live[j] = false;
        --n_live;
      } else {
        next[j] = *id;
      }
    }
  }
  std::vector<Generation> out;
  out.reserve(n);
  for (GenerationState& state : states) out.push_back(state.Take());
  return out;
}

Result<Generation> Generate(Engine& engine, Sequence& sequence, std::span<const int32_t> prompt,
                            const GenerateOptions& options, const Tokenizer* tokenizer,
                            const GenerateCallbacks& callbacks) {
  const GenerateJob job{&sequence, prompt, options};
  H2O_ASSIGN_OR_RETURN(std::vector<Generation> out,
                       GenerateLockstep(engine, {&job, 1}, tokenizer, callbacks));
  return std::move(out.front());
}

}  // namespace h2o
