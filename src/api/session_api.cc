// The C interface's session calls: create, feed, logits, score, KV stats.
#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "api/handles.h"
#include "kv/kv_report.h"
#include "kv/kv_spec.h"
#include "kv/kv_types.h"
#include "runtime/log_softmax.h"

using h2o::Result;
using h2o::Status;
using h2o::api::Fail;
using h2o::api::Guarded;

namespace {

Result<h2o::KvTypes> KvTypesOf(const h2o_session_params& p) {
  h2o::KvTypes types;
  if (p.kv_type_k) {
    auto k = h2o::ParseKvRowType(p.kv_type_k);
    if (!k.ok()) return k.status().WithContext("kv_type_k");
    types.k = *k;
  }
  if (p.kv_type_v) {
    auto v = h2o::ParseKvRowType(p.kv_type_v);
    if (!v.ok()) return v.status().WithContext("kv_type_v");
    types.v = *v;
  }
  return types;
}

Result<h2o::SessionOptions> SessionOptionsOf(const h2o_session_params& p) {
  if (p.n_ctx < 0) return Status::Error("n_ctx must be >= 0 (0: the model's)");
  if (p.n_threads < 0) return Status::Error("n_threads must be >= 0 (0: every hardware thread)");
  if (p.max_chunk < 0) return Status::Error("max_chunk must be >= 0 (0: n_ctx)");
  if (p.prompt_len < 0) return Status::Error("prompt_len must be >= 0 (0: none)");
  h2o::SessionOptions o;
  auto spec = h2o::ParseKvSpec(p.kv ? p.kv : "full");
  if (!spec.ok()) return spec.status().WithContext("kv");
  const std::optional<int64_t> prompt_len =
      p.prompt_len > 0 ? std::optional<int64_t>(p.prompt_len) : std::nullopt;
  auto plan = h2o::ResolveKvSpec(*spec, prompt_len);
  if (!plan.ok()) return plan.status().WithContext("kv");
  o.kv = std::move(plan).value();
  auto types = KvTypesOf(p);
  if (!types.ok()) return types.status();
  o.kv_types = *types;
  o.n_ctx = p.n_ctx;
  o.max_chunk = p.max_chunk;
  o.kv_pos_shift = p.kv_pos_shift;
  o.n_threads = p.n_threads > 0
                    ? p.n_threads
                    : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  return o;
}

// Why `tokens` cannot be fed to `s` as they are (the code, with the message
// recorded), or H2O_OK. The engine checks the same, but these two are the
// caller's to fix and get their own codes.
int CheckFeed(const h2o_session* s, const int32_t* tokens, int32_t n_tokens, const char* fn) {
  if (s == nullptr || tokens == nullptr || n_tokens < 1) {
    return Fail(H2O_ERR_INVALID_ARGUMENT,
                std::string(fn) + ": needs a session and at least one token");
  }
  const int32_t n_vocab = s->model->model->hparams().n_vocab;
  for (int32_t i = 0; i < n_tokens; ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      return Fail(H2O_ERR_INVALID_ARGUMENT, std::string(fn) + ": token " +
                                                std::to_string(tokens[i]) + " (at " +
                                                std::to_string(i) +
                                                ") is outside the vocabulary [0, " +
                                                std::to_string(n_vocab) + ")");
    }
  }
  if (!s->session->sequence().HasRoomFor(n_tokens)) {
    return Fail(H2O_ERR_CONTEXT_FULL,
                std::string(fn) + ": " + std::to_string(n_tokens) + " tokens after " +
                    std::to_string(s->session->n_past()) + " pass the context of " +
                    std::to_string(s->session->n_ctx()));
  }
  return H2O_OK;
}

void CopyTruncated(const std::string& text, char* out, size_t size) {
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" {

h2o_session_params h2o_session_default_params(void) {
  h2o_session_params p{};
  return p;  // every field 0/NULL/false: the model's context, every thread, full f16 cache
}

int h2o_session_create(const h2o_model* model, const h2o_session_params* params,
                       h2o_session** out) {
  if (model == nullptr || out == nullptr) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_session_create: model and out must not be NULL");
  }
  *out = nullptr;
  auto options = SessionOptionsOf(params ? *params : h2o_session_default_params());
  if (!options.ok()) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, options.status().WithContext("h2o_session_create"));
  }
  return Guarded([&]() -> int {
    auto session = h2o::Session::Create(*model->model, *options);
    if (!session.ok()) {
      return Fail(H2O_ERR_INVALID_ARGUMENT, session.status().WithContext("h2o_session_create"));
    }
    auto handle = std::make_unique<h2o_session>();
    handle->model = model;
    handle->session = std::move(session).value();
    *out = handle.release();
    return H2O_OK;
  });
}

void h2o_session_free(h2o_session* session) { delete session; }

int h2o_session_eval(h2o_session* s, const int32_t* tokens, int32_t n_tokens, bool all_logits) {
  if (int code = CheckFeed(s, tokens, n_tokens, "h2o_session_eval"); code != H2O_OK) return code;
  if (all_logits && n_tokens > s->session->max_chunk()) {
    return Fail(H2O_ERR_INVALID_ARGUMENT,
                "h2o_session_eval: all_logits needs at most max_chunk (" +
                    std::to_string(s->session->max_chunk()) + ") tokens, got " +
                    std::to_string(n_tokens));
  }
  return Guarded([&]() -> int {
    Status st = s->session->Eval({tokens, static_cast<size_t>(n_tokens)},
                                 all_logits ? h2o::LogitsFor::kAllTokens
                                            : h2o::LogitsFor::kLastToken);
    return st.ok() ? H2O_OK : Fail(H2O_ERR_EVAL, st.WithContext("h2o_session_eval"));
  });
}

const float* h2o_session_logits(const h2o_session* s, int32_t i) {
  if (s == nullptr) return nullptr;
  const std::span<const float> all = s->session->logits();
  const size_t n_vocab = static_cast<size_t>(s->model->model->hparams().n_vocab);
  const size_t rows = all.size() / n_vocab;
  if (rows == 0) return nullptr;
  if (i == -1) return all.data() + (rows - 1) * n_vocab;
  if (i < 0 || static_cast<size_t>(i) >= rows) return nullptr;
  return all.data() + static_cast<size_t>(i) * n_vocab;
}

int32_t h2o_session_n_past(const h2o_session* s) { return s ? s->session->n_past() : 0; }
int32_t h2o_session_n_ctx(const h2o_session* s) { return s ? s->session->n_ctx() : 0; }
void h2o_session_reset(h2o_session* s) {
  if (s) s->session->Reset();
}

int h2o_session_score(h2o_session* s, const int32_t* tokens, int32_t n_tokens, double* nll) {
  if (int code = CheckFeed(s, tokens, n_tokens, "h2o_session_score"); code != H2O_OK) return code;
  if (nll == nullptr && n_tokens > 1) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_session_score: nll must not be NULL");
  }
  return Guarded([&]() -> int {
    const int32_t chunk = s->session->max_chunk();
    for (int32_t start = 0; start < n_tokens; start += chunk) {
      const int32_t n = std::min(chunk, n_tokens - start);
      Status st = s->session->Eval({tokens + start, static_cast<size_t>(n)},
                                   h2o::LogitsFor::kAllTokens);
      if (!st.ok()) return Fail(H2O_ERR_EVAL, st.WithContext("h2o_session_score"));
      // Row r predicts token start + r + 1.
      const std::span<const float> logits = s->session->logits();
      const size_t n_vocab = logits.size() / static_cast<size_t>(n);
      for (int32_t r = 0; r < n && start + r + 1 < n_tokens; ++r) {
        nll[start + r] = h2o::NegLogSoftmax(logits.subspan(static_cast<size_t>(r) * n_vocab,
                                                           n_vocab),
                                            tokens[start + r + 1]);
      }
    }
    return H2O_OK;
  });
}

int h2o_session_kv_stats(const h2o_session* s, h2o_kv_stats* out) {
  if (s == nullptr || out == nullptr) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_session_kv_stats: NULL session or out");
  }
  const h2o::KvCache& cache = s->session->cache();
  const h2o::KvCacheConfig& c = cache.config();
  h2o_kv_stats st{};
  st.n_layer = c.n_layer;
  st.n_head_kv = c.n_head_kv;
  st.budget = c.budget;
  st.min_head_kept = c.n_layer > 0 && c.n_head_kv > 0 ? INT32_MAX : 0;
  for (int32_t l = 0; l < c.n_layer; ++l) {
    for (int32_t h = 0; h < c.n_head_kv; ++h) {
      const int32_t kept = cache.count(l, h);
      st.tokens_kept += kept;
      st.min_head_kept = std::min(st.min_head_kept, kept);
      st.max_head_kept = std::max(st.max_head_kept, kept);
    }
  }
  st.allocated_bytes = h2o::KvMemoryFor(c, cache.policy()).total();
  st.full_cache_bytes = h2o::FullKvMemory(c, s->session->n_past()).total();
  CopyTruncated(s->session->kv_plan().Describe(), st.policy, sizeof st.policy);
  *out = st;
  return H2O_OK;
}

}  // extern "C"
