// Generating a continuation the way the H2O repository's summarization runs
// ask for it: up to max_tokens tokens from a sampler, ending early at the
// end-of-sequence token or at the first stop string, with the session's
// KV policy evicting throughout (prompt included, in --chunk pieces).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

namespace h2o {

struct GenerationOptions {
  int32_t max_tokens = 64;
  std::vector<std::string> stop;  // empty strings are ignored
  SamplerOptions sampling;
};

struct Generation {
  std::vector<int32_t> ids;      // generated tokens (not the prompt, not EOS)
  std::vector<double> logprobs;  // log p of each generated token (untempered)
  // The generated pieces joined (a leading "▁" is a space), cut before the
  // first stop string.
  std::string text;
  std::string finish_reason;  // "stop" (a stop string or EOS) or "length"
};

// Resets the session, feeds the prompt, then samples. After each token the
// text so far is searched for the stop strings; at a match the text is cut
// where the earliest one begins and generation ends (the ids keep the
// token that completed it). Errors: an empty prompt, or those of
// Session::Eval (e.g. prompt + max_tokens past the context).
Result<Generation> GenerateUntil(Session& session, const Tokenizer& tokenizer,
                                 std::span<const int32_t> prompt, const GenerationOptions& options);

}  // namespace h2o
