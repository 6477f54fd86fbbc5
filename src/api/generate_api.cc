// The C interface's sampling and generation: the runtime's Sampler and its
// one generation loop (runtime/generate.h), which `h2o generate` runs too.
#include <algorithm>
#include <span>

#include "api/handles.h"
#include "runtime/generate.h"

using h2o::api::Fail;
using h2o::api::Guarded;

namespace h2o::api {

SamplerOptions SamplerOptionsOf(const h2o_sampler_params& p) {
  SamplerOptions o;
  o.temperature = p.temperature;
  o.top_k = p.top_k;
  o.top_p = p.top_p;
  o.min_p = p.min_p;
  o.repeat_penalty = p.repeat_penalty;
  o.repeat_last_n = p.repeat_last_n;
  o.seed = p.seed;
  return o;
}

}  // namespace h2o::api

extern "C" {

h2o_sampler_params h2o_sampler_default_params(void) {
  const h2o::SamplerOptions d;
  h2o_sampler_params p{};
  p.temperature = d.temperature;
  p.top_k = d.top_k;
  p.top_p = d.top_p;
  p.min_p = d.min_p;
  p.repeat_penalty = d.repeat_penalty;
  p.repeat_last_n = d.repeat_last_n;
  p.seed = d.seed;
  return p;
}

h2o_sampler_params h2o_sampler_greedy_params(void) {
  h2o_sampler_params p = h2o_sampler_default_params();
  p.temperature = 0.0f;
  return p;
}

int h2o_sampler_create(const h2o_sampler_params* params, h2o_sampler** out) {
  if (out == nullptr) return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_sampler_create: NULL out");
  *out = nullptr;
  const h2o_sampler_params p = params ? *params : h2o_sampler_default_params();
  if (p.repeat_last_n < 0) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_sampler_create: repeat_last_n must be >= 0");
  }
  return Guarded([&]() -> int {
    *out = new h2o_sampler(h2o::api::SamplerOptionsOf(p));
    return H2O_OK;
  });
}

void h2o_sampler_free(h2o_sampler* sampler) { delete sampler; }

int32_t h2o_sampler_sample(h2o_sampler* sampler, const float* logits, int32_t n_vocab) {
  if (sampler == nullptr || logits == nullptr || n_vocab < 1) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_sampler_sample: NULL sampler or logits");
    return -1;
  }
  return sampler->sampler.Sample({logits, static_cast<size_t>(n_vocab)});
}

void h2o_sampler_accept(h2o_sampler* sampler, int32_t token) {
  if (sampler) sampler->sampler.Accept(token);
}

h2o_generate_params h2o_generate_default_params(void) {
  h2o_generate_params p{};
  p.max_tokens = h2o::GenerateOptions{}.max_tokens;
  p.stop_at_eog = true;
  p.sampling = h2o_sampler_greedy_params();
  return p;
}

int h2o_generate(h2o_session* s, const int32_t* prompt, int32_t n_prompt,
                 const h2o_generate_params* params, int32_t* out, int32_t n_out_max,
                 int32_t* n_out) {
  if (n_out) *n_out = 0;
  if (s == nullptr || prompt == nullptr || n_prompt < 1) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_generate: needs a session and a prompt");
  }
  if (n_out_max < 0 || (out == nullptr && n_out_max > 0)) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_generate: NULL out with n_out_max > 0");
  }
  const h2o_generate_params p = params ? *params : h2o_generate_default_params();
  if (p.max_tokens < 0) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_generate: max_tokens must be >= 0");
  }
  const int32_t n_vocab = s->model->model->hparams().n_vocab;
  for (int32_t i = 0; i < n_prompt; ++i) {
    if (prompt[i] < 0 || prompt[i] >= n_vocab) {
      return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_generate: token " + std::to_string(prompt[i]) +
                                                " is outside the vocabulary");
    }
  }
  h2o_session_reset(s);
  const int64_t positions = int64_t{n_prompt} + p.max_tokens;
  if (!s->session->sequence().HasRoomFor(positions)) {
    return Fail(H2O_ERR_CONTEXT_FULL, "h2o_generate: the prompt (" + std::to_string(n_prompt) +
                                          ") and max_tokens (" + std::to_string(p.max_tokens) +
                                          ") pass the context of " +
                                          std::to_string(s->session->n_ctx()));
  }
  return Guarded([&]() -> int {
    h2o::GenerateOptions options;
    options.max_tokens = p.max_tokens;
    options.stop_at_end = p.stop_at_eog;
    options.sampling = h2o::api::SamplerOptionsOf(p.sampling);
    const h2o::Tokenizer* tokenizer = s->model->tokenizer ? &*s->model->tokenizer : nullptr;
    auto generation = h2o::Generate(s->session->engine(), s->session->sequence(),
                                    {prompt, static_cast<size_t>(n_prompt)}, options, tokenizer);
    if (!generation.ok()) return Fail(H2O_ERR_EVAL, generation.status().WithContext("h2o_generate"));
    const std::vector<int32_t>& ids = generation->ids;
    const auto n = static_cast<int32_t>(ids.size());
    std::copy_n(ids.begin(), std::min(n, n_out_max), out);
    if (n_out) *n_out = n;
    if (n > n_out_max) {
      return Fail(H2O_ERR_BUFFER_TOO_SMALL, "h2o_generate: " + std::to_string(n) +
                                                " tokens generated, out holds " +
                                                std::to_string(n_out_max));
    }
    return H2O_OK;
  });
}

}  // extern "C"
