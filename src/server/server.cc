#include "server/server.h"

#include <fmt/format.h>
#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <thread>

#include "chat/system_prompt.h"
#include "runtime/engine.h"
#include "runtime/log_softmax.h"
#include "runtime/scheduler.h"
#include "runtime/state_dir.h"
#include "server/api_request.h"
#include "server/api_response.h"
#include "server/completion_plan.h"
#include "server/embeddings.h"
#include "server/http_server.h"
#include "server/info_endpoints.h"
#include "server/json_fields.h"
#include "server/kv_endpoint.h"
#include "server/kv_state.h"
#include "server/log_limiter.h"
#include "server/metrics.h"
#include "server/native_response.h"
#include "server/playground_files.h"
#include "server/slot_actions.h"

namespace h2o::server {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int64_t kDefaultMaxTokens = 2048;
// Finished requests whose cache /v1/kv still answers for: enough for a few
// playground tabs comparing two policies each, or a script reading its last
// runs. The byte cap bounds the worst case (full caches of long contexts:
// 22 layers x 4 KV heads x 4096 tokens is ~4 MiB a snapshot).
constexpr size_t kKeepFinishedKv = 16;
constexpr size_t kKeepFinishedKvBytes = size_t{64} << 20;
// How long GET /v1/kv waits for a running request's next step boundary.
constexpr std::chrono::milliseconds kKvSnapshotWait{2000};
constexpr int32_t kLogLinesPerSecond = 10;
// Finished requests whose kept state POST /slots/{id}?action=save can name.
constexpr size_t kKeepFinishedIds = 256;
// Handlers parse, tokenize and submit; none waits for a generation.
constexpr int32_t kHandlerThreads = 4;

// log p(token) and the top_n most likely tokens, from the logits it was
// sampled from.
TokenLogprob Logprobs(const Tokenizer& tokenizer, std::span<const float> logits, int32_t token,
                      int32_t top_n) {
  // One pass over the vocabulary for the token and all its alternatives.
  const double lse = LogSumExp(logits);
  TokenLogprob t;
  t.piece = tokenizer.TokenToPiece(token);
  t.logprob = static_cast<double>(logits[token]) - lse;
  if (top_n > 0) {
    std::vector<int32_t> ids(logits.size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
    const size_t n = std::min<size_t>(top_n, ids.size());
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int32_t a, int32_t b) {
      return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    });
    for (size_t i = 0; i < n; ++i) {
      t.top.emplace_back(tokenizer.TokenToPiece(ids[i]), static_cast<double>(logits[ids[i]]) - lse);
    }
  }
  return t;
}

// "cmpl-" and 128 random bits in hex: an id names a request's cache at
// /v1/kv/{id}, so nobody may guess another's.
std::string RandomId(const char* prefix) {
  uint8_t bits[16];
  size_t got = 0;
  while (got < sizeof(bits)) {
    const ssize_t n = getrandom(bits + got, sizeof(bits) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  std::string id = prefix;
  for (const uint8_t b : bits) id += fmt::format("{:02x}", b);
  return id;
}

// Equal strings, in a time that does not depend on where they differ.
bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string_view BearerToken(const HttpRequest& req) {
  const std::string_view auth = req.Header("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  return auth.starts_with(kBearer) ? auth.substr(kBearer.size()) : std::string_view();
}

// One completion on its way out: what the driver thread's callback keeps
// between tokens.
struct Completion {
  std::shared_ptr<HttpExchange> exchange;
  std::shared_ptr<const CompletionParams> params;
  ResponseHeader header;
  int32_t top_n = -1;  // log-probabilities of this many alternatives; -1: none
  std::string echo;    // the prompt's text, shown first (completions' echo)
  // The prompt's ids and those generated so far: the kept state's tokens
  // are their first TokenEvent::kept_tokens.
  std::vector<int32_t> ids;
  int32_t key_index = -1;
  Usage usage;         // prompt tokens and policy; the rest at the end
  std::string endpoint;  // the path asked, for the log
  Clock::time_point received = Clock::now();
  std::optional<Clock::time_point> first_token;
  // llama-server's /completion: its own shapes (server/native_response.h),
  // which echo the prompt and the token limit.
  bool native = false;
  std::string prompt;
  int32_t max_tokens = 0;

  // Milliseconds from the arrival to the first token, and from it to `end`.
  NativeTimings Timings(Clock::time_point end) const {
    const Clock::time_point first = first_token.value_or(end);
    return {std::chrono::duration<double, std::milli>(first - received).count(),
            std::chrono::duration<double, std::milli>(end - first).count()};
  }
  std::shared_ptr<KvStateStore::Tracker> kv_state;  // null: not readable at /v1/kv
  // Streamed: whether the first chunk went out, and the text's length so far.
  bool first = true;
  size_t offset = 0;
  // Not streamed: the text and tokens so far.
  std::string text;
  std::vector<TokenLogprob> tokens;
  std::atomic<bool> finished{false};
};

}  // namespace

struct Server::Impl {
  const Model& model;
  const Tokenizer& tokenizer;
  ServerOptions options;
  LogLimiter log;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<HttpServer> http;
  Metrics metrics;
  KvStateStore kv_states{kKeepFinishedKv, kKeepFinishedKvBytes};
  std::unique_ptr<StateDir> state_dir;  // null without --cache-dir
  SlotActions slot_actions{kKeepFinishedIds};

  std::mutex mu;
  std::condition_variable wake;
  bool work = false;
  bool stop_driver = false;
  std::atomic<bool> draining{false};

  using Handler = std::function<void(const HttpRequest&, const std::shared_ptr<HttpExchange>&)>;
  struct Route {
    std::string method;
    std::string path;
    bool then_one_segment = false;  // path is a prefix, then one non-empty segment
    Handler handle;

    bool Matches(std::string_view p) const {
      return then_one_segment ? p.size() > path.size() && p.starts_with(path) &&
                                    p.find('/', path.size()) == std::string_view::npos
                              : p == path;
    }
  };
  std::vector<Route> routes;

  Impl(const Model& m, const Tokenizer& t, ServerOptions o)
      : model(m),
        tokenizer(t),
        options(std::move(o)),
        log(options.log, kLogLinesPerSecond) {}

  int32_t ContextSize() const {
    return options.sequence.n_ctx > 0 ? options.sequence.n_ctx : model.hparams().n_ctx_train;
  }

  void Wake() {
    {
      std::lock_guard<std::mutex> lock(mu);
      work = true;
    }
    wake.notify_one();
  }

  // Work the driver thread runs between steps (it alone drives the engine).
  std::deque<std::function<void()>> driver_tasks;

  void RunOnDriver(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu);
      driver_tasks.push_back(std::move(task));
    }
    Wake();
  }

  void DriverLoop() {
    for (;;) {
      std::function<void()> task;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!driver_tasks.empty()) {
          task = std::move(driver_tasks.front());
          driver_tasks.pop_front();
        }
      }
      if (task) task();
      if (scheduler->Step() || task) continue;
      std::unique_lock<std::mutex> lock(mu);
      if (stop_driver && driver_tasks.empty()) return;
      if (!driver_tasks.empty()) continue;
      wake.wait_for(lock, std::chrono::milliseconds(50), [&] { return work || stop_driver; });
      work = false;
    }
  }

  void SendError(const HttpRequest& req, HttpExchange& ex, const ApiError& e,
                 const HttpHeaders& headers = {}) {
    metrics.request_errors += 1;
    log.Line(fmt::format("{}: {} {} {}: {}", req.peer, e.status, req.method, req.path, e.message));
    ex.Reply(e.status, "application/json", ErrorBody(e), headers);
  }

  // The index of the API key the request carries; -1 when the server has
  // none; nullopt when it needs one and the request has none of them.
  std::optional<int32_t> ApiKeyIndex(const HttpRequest& req) const {
    if (options.api_keys.empty()) return -1;
    const std::string_view token = BearerToken(req);
    std::optional<int32_t> found;
    for (size_t i = 0; i < options.api_keys.size(); ++i) {
      if (SameSecret(token, options.api_keys[i])) found = static_cast<int32_t>(i);
    }
    return found;
  }

  void Get(const std::string& path, Handler handle) {
    routes.push_back({"GET", path, false, std::move(handle)});
  }
  void Post(const std::string& path, Handler handle) {
    routes.push_back({"POST", path, false, std::move(handle)});
  }

  // Paths only an API key opens (when the server has keys): the API, and
  // what tells about its model and requests; not /health, /metrics (its
  // own key) or the playground's files.
  static bool NeedsApiKey(std::string_view path) {
    return path.starts_with("/v1/") || path == "/completion" || path == "/completions" ||
           path == "/embeddings" ||
           path == "/tokenize" || path == "/detokenize" ||
           path == "/props" || path == "/slots" || path.starts_with("/slots/");
  }

  ServerProps Props() const {
    const HParams& hp = model.hparams();
    return {.model_id = options.model_id,
            .model_path = options.model_path,
            .build_info = options.build_info,
            .chat_template = options.chat_template ? ChatTemplateName(*options.chat_template) : "",
            .default_kv = options.default_kv.text,
            .n_ctx = ContextSize(),
            .n_ctx_train = hp.n_ctx_train,
            .total_slots = options.parallel,
            .default_max_tokens = kDefaultMaxTokens,
            .kv_memory_bytes = options.kv_memory_bytes,
            .prompt_cache_bytes = options.prompt_cache_bytes,
            .n_threads = options.n_threads,
            .n_vocab = hp.n_vocab,
            .n_layer = hp.n_layer};
  }

  // A body endpoint's answer: 200 with `out`, or the error.
  void ReplyBody(const HttpRequest& req, HttpExchange& ex,
                 const std::function<std::optional<ApiError>(std::string&)>& make) {
    std::string out;
    if (auto e = make(out)) {
      SendError(req, ex, *e);
      return;
    }
    ex.Reply(200, "application/json", out);
  }

  void Handle(HttpRequest req, const std::shared_ptr<HttpExchange>& ex) {
    if (NeedsApiKey(req.path) && !ApiKeyIndex(req)) {
      SendError(req, *ex,
                {401, "invalid or missing API key (Authorization: Bearer KEY)",
                 "invalid_request_error", "", "invalid_api_key"});
      return;
    }
    if (req.path == "/metrics" && !options.metrics_key.empty() &&
        !SameSecret(BearerToken(req), options.metrics_key)) {
      SendError(req, *ex,
                {401, "/metrics needs the metrics key (Authorization: Bearer KEY)",
                 "invalid_request_error", "", "invalid_api_key"});
      return;
    }
    if (options.verbose) {
      log.Line(fmt::format("{}: {} {} ({} body bytes)", req.peer, req.method, req.path,
                           req.body.size()));
    }
    const std::string method = req.method == "HEAD" ? "GET" : req.method;
    std::string allowed;
    for (const Route& route : routes) {
      if (!route.Matches(req.path)) continue;
      if (route.method == method) {
        route.handle(req, ex);
        return;
      }
      if (allowed.find(route.method) == std::string::npos) {
        allowed += allowed.empty() ? route.method : ", " + route.method;
      }
    }
    if (!allowed.empty()) {
      // As vLLM's server answers a served path asked with the wrong method.
      SendError(req, *ex,
                {405,
                 fmt::format("{} {}: method not allowed (use {})", req.method, req.path, allowed),
                 "invalid_request_error", "", ""},
                {{"Allow", allowed}});
      return;
    }
    SendError(req, *ex,
              {404, fmt::format("{} {}: not found", req.method, req.path),
               "invalid_request_error", "", ""});
  }

  // A 400 naming `param` where an id given by the client is not in the
  // vocabulary.
  std::optional<ApiError> CheckVocabularyIds(std::span<const int32_t> ids,
                                             const char* param) const {
    const int32_t n_vocab = model.hparams().n_vocab;
    for (const int32_t id : ids) {
      if (id >= n_vocab) {
        return Bad(param,
                   fmt::format("token id {} is not below the vocabulary size {}", id, n_vocab));
      }
    }
    return std::nullopt;
  }

  // The prompt's token ids, or the error to answer with.
  std::optional<ApiError> PromptIds(const CompletionParams& p, std::vector<int32_t>& ids) {
    if (p.chat) {
      if (!options.chat_template) {
        return ApiError{400,
                        "this model's GGUF has no chat template h2o recognizes; start the server "
                        "with --chat-template NAME (llama2, llama3, chatml, phi3, gemma, mistral, "
                        "zephyr)",
                        "invalid_request_error", "messages", ""};
      }
      auto text = RenderChat(*options.chat_template, p.messages);
      if (!text.ok())
        return ApiError{400, text.status().message(), "invalid_request_error", "messages", ""};
      ids = tokenizer.Encode(*text, /*add_special=*/true);
    } else if (p.prompt_is_ids) {
      ids = p.prompt_ids;
      if (auto e = CheckVocabularyIds(ids, "prompt")) return e;
    } else {
      ids = tokenizer.Encode(p.prompt_text, /*add_special=*/true);
    }
    if (ids.empty())
      return ApiError{400, "the prompt has no tokens", "invalid_request_error", "prompt", ""};
    return std::nullopt;
  }

  // Driver thread: one streamed event of /completion: a piece of text, or
  // the last event with the figures (and no "[DONE]", as llama-server).
  void NativeStreamEvent(Completion& c, const TokenEvent& e, std::string_view delta) {
    std::string out;
    if (!delta.empty()) {
      out += SseEvent(NativeChunkBody(delta, e.n_generated, c.usage.prompt_tokens));
    }
    if (e.finished) {
      out += SseEvent(e.reason == FinishReason::kError
                          ? ErrorBody({500, e.error, "server_error", "", ""})
                          : NativeFinalBody(*c.params, c.header, c.prompt, "", e.reason, c.usage,
                                            c.max_tokens, c.Timings(Clock::now())));
    }
    if (!out.empty()) c.exchange->Write(out);
    if (e.finished) c.exchange->End();
  }

  // Driver thread: one streamed event's SSE text.
  void StreamEvent(Completion& c, const TokenEvent& e, std::string delta,
                   std::vector<TokenLogprob> tokens) {
    if (c.native) {
      NativeStreamEvent(c, e, delta);
      return;
    }
    const CompletionParams& params = *c.params;
    std::string out;
    if (c.first && !c.echo.empty()) {
      out += SseEvent(ChunkBody(params, c.header, c.echo, {}, 0, nullptr, true));
      c.first = false;
      c.offset = c.echo.size();
    }
    if (e.finished && e.reason == FinishReason::kError) {
      out += SseEvent(ErrorBody({500, e.error, "server_error", "", ""}));
    } else {
      if (!delta.empty() || !tokens.empty() || c.first) {
        out += SseEvent(ChunkBody(params, c.header, delta, tokens, c.offset, nullptr, c.first));
        c.first = false;
        c.offset += delta.size();
      }
      if (e.finished) {
        out += SseEvent(
            ChunkBody(params, c.header, "", {}, c.offset, FinishReasonName(e.reason), false));
        if (params.include_usage) out += SseEvent(UsageChunkBody(params, c.header, c.usage));
      }
    }
    if (e.finished) out += "data: [DONE]\n\n";
    c.exchange->Write(out);
    if (e.finished) c.exchange->End();
  }

  // Driver thread: the request's line in the log.
  void LogFinished(const Completion& c, const TokenEvent& e) const {
    if (!options.on_request) return;
    const NativeTimings t = c.Timings(Clock::now());
    RequestRecord r;
    r.id = c.header.id;
    r.endpoint = c.endpoint;
    r.status = e.reason == FinishReason::kError ? 500 : 200;
    r.prompt_tokens = c.usage.prompt_tokens;
    r.cached_tokens = e.cached_tokens;
    r.completion_tokens = e.n_generated;
    r.ttft_s = t.prompt_ms / 1e3;
    r.total_s = (t.prompt_ms + t.predicted_ms) / 1e3;
    r.kv_bytes = e.kv_bytes;
    r.evictions = e.evictions;
    r.kv = c.usage.kv;
    r.finish_reason = e.reason == FinishReason::kError ? "error: " + e.error
                                                       : std::string(FinishReasonName(e.reason));
    options.on_request(r);
  }

  // Driver thread: a token, or the end.
  bool OnEvent(Completion& c, const TokenEvent& e) {
    if (e.finished) {
      c.finished = true;
      if (c.kv_state) c.kv_state->Done();
      c.usage.completion_tokens = e.n_generated;
      c.usage.kv_bytes = e.kv_bytes;
      c.usage.evictions = e.evictions;
      c.usage.cached_tokens = e.cached_tokens;
      if (e.kept_tokens > 0 && static_cast<size_t>(e.kept_tokens) <= c.ids.size()) {
        c.ids.resize(static_cast<size_t>(e.kept_tokens));
        slot_actions.Finished(c.header.id, c.key_index, std::move(c.ids));
      }
      LogFinished(c, e);
      std::string delta(e.text);
      if (c.params->stream) {
        StreamEvent(c, e, std::move(delta), {});
      } else if (e.reason == FinishReason::kError) {
        c.exchange->Reply(500, "application/json",
                          ErrorBody({500, e.error, "server_error", "", ""}),
                          {{"X-Request-Id", c.header.id}});
      } else {
        c.text += delta;
        c.exchange->Reply(200, "application/json",
                          c.native ? NativeFinalBody(*c.params, c.header, c.prompt, c.text,
                                                     e.reason, c.usage, c.max_tokens,
                                                     c.Timings(Clock::now()))
                                   : CompletionBody(*c.params, c.header, c.text, c.echo.size(),
                                                    c.tokens, FinishReasonName(e.reason), c.usage),
                          {{"X-Request-Id", c.header.id}});
      }
      return true;
    }
    metrics.generated_tokens += 1;
    if (!c.first_token) c.first_token = Clock::now();
    c.ids.push_back(e.token);
    if (c.kv_state) c.kv_state->AddToken(e.token);
    std::string delta(e.text);
    std::vector<TokenLogprob> tokens;
    if (c.top_n >= 0) tokens.push_back(Logprobs(tokenizer, e.logits, e.token, c.top_n));
    if (c.params->stream) {
      StreamEvent(c, e, std::move(delta), std::move(tokens));
    } else {
      c.text += delta;
      for (TokenLogprob& t : tokens) c.tokens.push_back(std::move(t));
    }
    return true;
  }

  // chat: /v1/chat/completions; native: llama-server's /completion (a
  // completion's fields, its own response shapes).
  void HandleCompletion(const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex,
                        bool chat, bool native = false) {
    metrics.requests += 1;
    if (draining) {
      SendError(req, *ex, {503, "the server is shutting down", "server_error", "", ""});
      return;
    }
    auto params = std::make_shared<CompletionParams>();
    if (auto e = ParseCompletionRequest(req.body, chat, *params)) {
      SendError(req, *ex, *e);
      return;
    }
    std::vector<int32_t> prompt;
    if (auto e = PromptIds(*params, prompt)) {
      SendError(req, *ex, *e);
      return;
    }
    for (const auto& [id, bias] : params->logit_bias) {
      if (id >= model.hparams().n_vocab) {
        SendError(req, *ex,
                  {400,
                   fmt::format("'logit_bias' names token {}, not below the vocabulary size {}", id,
                               model.hparams().n_vocab),
                   "invalid_request_error", "logit_bias", ""});
        return;
      }
    }
    const int64_t n_prompt = static_cast<int64_t>(prompt.size());
    CompletionPlan run;
    // A chat's system prompt: what n_keep -1 pins, and the prefix whose
    // state the prompt cache keeps for every conversation that starts so.
    const int64_t system_tokens =
        chat && options.chat_template
            ? SystemPromptTokens(*options.chat_template, params->messages, tokenizer)
            : 0;
    const KeepTokens keep{.default_keep = options.default_keep,
                          .keep_all = chat ? system_tokens : n_prompt};
    if (auto e = PlanCompletion(*params, n_prompt, ContextSize(), options.default_kv,
                                kDefaultMaxTokens, keep, run)) {
      SendError(req, *ex, *e);
      return;
    }
    const int32_t max_tokens = run.max_tokens;

    auto c = std::make_shared<Completion>();
    c->exchange = ex;
    c->params = params;
    c->header.id = RandomId(chat ? "chatcmpl-" : "cmpl-");
    c->header.created = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    c->header.model = options.model_id;
    c->top_n = params->logprobs ? params->top_logprobs : -1;
    if (params->echo && !chat) c->echo = tokenizer.Decode(prompt, /*remove_special=*/true);
    c->usage.prompt_tokens = static_cast<int32_t>(n_prompt);
    c->ids = prompt;
    c->key_index = *ApiKeyIndex(req);
    c->usage.kv = run.kv.Describe();
    c->endpoint = req.path;
    c->native = native;
    c->max_tokens = max_tokens;
    if (native) {
      c->prompt = params->prompt_is_ids ? tokenizer.Decode(prompt, /*remove_special=*/true)
                                        : params->prompt_text;
    }
    if (options.verbose) {
      log.Line(fmt::format(
          "{} {}: {} prompt tokens, max_tokens {}, kv {}, n_keep {}, temperature {:g}, top_p "
          "{:g}, top_k {}, min_p {:g}, seed {}, stream {}, cache_prompt {}",
          c->header.id, req.path, n_prompt, max_tokens, c->usage.kv, run.kv.keep,
          params->temperature, params->top_p, params->top_k, params->min_p,
          params->seed ? std::to_string(*params->seed) : std::string("random"), params->stream,
          params->cache_prompt));
    }

    Request request;
    request.prompt = prompt;
    request.sequence = options.sequence;
    request.sequence.n_ctx = static_cast<int32_t>(n_prompt + max_tokens);
    request.sequence.kv = run.kv;
    request.tokenizer = &tokenizer;
    GenerateOptions& generation = request.generation;
    generation.sampling.temperature = params->temperature;
    generation.sampling.top_p = params->top_p;
    generation.sampling.top_k = params->top_k;
    generation.sampling.min_p = params->min_p;
    generation.sampling.typical_p = params->typical_p;
    generation.sampling.repeat_penalty = params->repeat_penalty;
    generation.sampling.repeat_last_n = params->repeat_last_n;
    generation.sampling.frequency_penalty = params->frequency_penalty;
    generation.sampling.presence_penalty = params->presence_penalty;
    generation.sampling.logit_bias = params->logit_bias;
    generation.sampling.seed = params->seed.value_or(
        static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
    generation.max_tokens = max_tokens;
    generation.stop = params->stop;
    generation.stop_at_end = !params->ignore_eos;
    generation.grammar = params->grammar;
    request.cache_prompt = params->cache_prompt;
    request.shared_prefix = static_cast<int32_t>(system_tokens);
    if (options.kv_endpoint || params->kv_endpoint) {
      c->kv_state = kv_states.Track(c->header.id, prompt, *ApiKeyIndex(req));
      request.on_cache = [kv_state = c->kv_state](const Sequence& sequence, bool final) {
        kv_state->OnCache(sequence, final);
      };
    }
    request.on_event = [this, c](const TokenEvent& e) { return OnEvent(*c, e); };
    auto id = scheduler->Submit(std::move(request));
    if (!id.ok()) {
      if (c->kv_state) c->kv_state->Done();
      const bool full = id.status().code() == StatusCode::kUnavailable;
      SendError(req, *ex,
                {full ? 503 : 400, id.status().message(),
                 full ? "server_error" : "invalid_request_error", "", ""});
      return;
    }
    metrics.prompt_tokens += n_prompt;
    Wake();
    if (params->stream) {
      // The id goes out before the first token (a long prompt's prefill):
      // the playground watches the cache fill by it.
      ex->BeginStream(200, "text/event-stream",
                      {{"X-Request-Id", c->header.id},
                       {"Cache-Control", "no-cache"},
                       {"X-Accel-Buffering", "no"}});
    }
    ex->OnClose([this, request_id = *id, c] {
      if (c->finished) return;
      metrics.cancelled += 1;
      scheduler->Cancel(request_id);
      Wake();
    });
  }

  // /v1/embeddings: the inputs tokenized here and checked against the
  // context, then embedded one after another on the driver thread, each in
  // a full cache of its own length (allocated for it, outside --kv-mem,
  // and freed after), between the scheduler's steps.
  void HandleEmbeddings(const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
    if (!options.embeddings) {
      SendError(req, *ex,
                {501, "this server does not give embeddings: start it with --embeddings",
                 "not_supported_error", "", ""});
      return;
    }
    EmbeddingParams params;
    if (auto e = ParseEmbeddingRequest(req.body, params)) {
      SendError(req, *ex, *e);
      return;
    }
    auto inputs = std::make_shared<std::vector<std::vector<int32_t>>>(std::move(params.ids));
    for (const std::string& text : params.texts) {
      inputs->push_back(tokenizer.Encode(text, /*add_special=*/true));
    }
    int64_t total = 0;
    for (const std::vector<int32_t>& ids : *inputs) {
      if (auto e = CheckVocabularyIds(ids, "input")) {
        SendError(req, *ex, *e);
        return;
      }
      if (ids.empty() || static_cast<int64_t>(ids.size()) > ContextSize()) {
        SendError(req, *ex,
                  {400,
                   fmt::format("an input of {} tokens: an input needs 1 to {} (the context)",
                               ids.size(), ContextSize()),
                   "invalid_request_error", "input", "context_length_exceeded"});
        return;
      }
      total += static_cast<int64_t>(ids.size());
    }
    metrics.requests += 1;
    metrics.prompt_tokens += total;
    RunOnDriver([this, ex, inputs, total, base64 = params.base64] {
      std::vector<std::vector<float>> vectors;
      for (const std::vector<int32_t>& ids : *inputs) {
        SequenceOptions o = options.sequence;
        o.n_ctx = static_cast<int32_t>(ids.size());
        o.kv = KvPlan{};  // full: an embedding attends to the whole input
        o.max_chunk = std::min(o.n_ctx, engine->max_batch_tokens());
        auto sequence = engine->NewSequence(o);
        auto vector = sequence.ok() ? engine->Embed(**sequence, ids)
                                    : Result<std::vector<float>>(sequence.status());
        if (!vector.ok()) {
          ex->Reply(500, "application/json",
                    ErrorBody({500, vector.status().message(), "server_error", "", ""}));
          return;
        }
        vectors.push_back(std::move(vector).value());
      }
      ex->Reply(200, "application/json",
                EmbeddingsBody(vectors, base64, options.model_id, total));
    });
  }

  void HandleKv(const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
    const std::string id = req.path.substr(std::string_view("/v1/kv/").size());
    const HParams& hp = model.hparams();
    std::optional<int32_t> layer;
    if (auto e = ParseKvLayer(req.QueryParam("layer"), hp.n_layer, layer)) {
      SendError(req, *ex, *e);
      return;
    }
    auto state = kv_states.Get(id, *ApiKeyIndex(req), kKvSnapshotWait, [this] { Wake(); });
    if (!state) {
      SendError(req, *ex,
                {404,
                 fmt::format("no cache of request '{}' is kept for you: unknown, made under "
                             "another API key, finished more than {} kept requests ago, or not "
                             "kept (a request keeps its cache readable with \"kv_endpoint\": "
                             "true, every request under h2o serve --kv-endpoint)",
                             id, kKeepFinishedKv),
                 "invalid_request_error", "", "request_not_found"});
      return;
    }
    ex->Reply(200, "application/json",
              KvStateBody(id, state->get(), layer, hp.n_layer, hp.n_head_kv, tokenizer),
              {{"Cache-Control", "no-store"}});
  }

  std::string MetricsText() {
    return metrics.Render(scheduler->Stats(), http->Stats());
  }

  void Routes() {
    Get("/health", [this](const HttpRequest&, const std::shared_ptr<HttpExchange>& ex) {
      ex->Reply(200, "application/json",
                json({{"status", draining ? "draining" : "ok"}}).dump());
    });
    Get("/v1/models", [this](const HttpRequest&, const std::shared_ptr<HttpExchange>& ex) {
      ex->Reply(200, "application/json", ModelListBody(Props()));
    });
    routes.push_back({"GET", "/v1/models/", /*then_one_segment=*/true,
                      [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
                        const std::string id = req.path.substr(std::string_view("/v1/models/").size());
                        if (id != options.model_id) {
                          SendError(req, *ex,
                                    {404, fmt::format("the model '{}' does not exist (this server has '{}')",
                                                      id, options.model_id),
                                     "invalid_request_error", "model", "model_not_found"});
                          return;
                        }
                        ex->Reply(200, "application/json", ModelObject(Props()));
                      }});
    Get("/props", [this](const HttpRequest&, const std::shared_ptr<HttpExchange>& ex) {
      ex->Reply(200, "application/json", PropsBody(Props()));
    });
    Get("/slots", [this](const HttpRequest&, const std::shared_ptr<HttpExchange>& ex) {
      ex->Reply(200, "application/json", SlotsBody(scheduler->Slots()));
    });
    routes.push_back({"POST", "/slots/", /*then_one_segment=*/true,
                      [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
                        const std::string id = req.path.substr(std::string_view("/slots/").size());
                        ReplyBody(req, *ex, [&](std::string& out) {
                          return slot_actions.Handle(*scheduler, id, req.QueryParam("action"),
                                                     req.body, *ApiKeyIndex(req), out);
                        });
                      }});
    Post("/tokenize", [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
      ReplyBody(req, *ex, [&](std::string& out) { return TokenizeBody(req.body, tokenizer, out); });
    });
    Post("/detokenize", [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
      ReplyBody(req, *ex,
                [&](std::string& out) { return DetokenizeBody(req.body, tokenizer, out); });
    });
    Get("/metrics", [this](const HttpRequest&, const std::shared_ptr<HttpExchange>& ex) {
      ex->Reply(200, "text/plain; version=0.0.4", MetricsText());
    });
    routes.push_back({"GET", "/v1/kv/", /*then_one_segment=*/true,
                      [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
                        HandleKv(req, ex);
                      }});
    for (const StaticFile& file : PlaygroundFiles()) {
      // Range is not honoured: a static file is answered whole, once.
      Get(std::string(file.path), [file](const HttpRequest&,
                                         const std::shared_ptr<HttpExchange>& ex) {
        ex->Reply(200, file.content_type, std::string(file.body.data(), file.body.size()));
      });
    }
    Post("/v1/completions", [this](const HttpRequest& req,
                                   const std::shared_ptr<HttpExchange>& ex) {
      HandleCompletion(req, ex, /*chat=*/false);
    });
    for (const char* path : {"/v1/embeddings", "/embeddings"}) {
      Post(path, [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
        HandleEmbeddings(req, ex);
      });
    }
    // llama-server's native completion, under both of its names.
    for (const char* path : {"/completion", "/completions"}) {
      Post(path, [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
        HandleCompletion(req, ex, /*chat=*/false, /*native=*/true);
      });
    }
    Post("/v1/chat/completions",
         [this](const HttpRequest& req, const std::shared_ptr<HttpExchange>& ex) {
           HandleCompletion(req, ex, /*chat=*/true);
         });
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::Create(const Model& model, const Tokenizer& tokenizer,
                                               ServerOptions options) {
  auto impl = std::make_unique<Impl>(model, tokenizer, std::move(options));
  const ServerOptions& o = impl->options;
  const int32_t batch = std::max({1, o.batch_tokens, o.sequence.max_chunk});
  H2O_ASSIGN_OR_RETURN(
      impl->engine, Engine::Create(model, {.n_threads = o.n_threads, .max_batch_tokens = batch}));
  if (impl->options.sequence.max_chunk <= 0) impl->options.sequence.max_chunk = batch;
  if (!o.cache_dir.empty()) {
    Impl* s = impl.get();
    H2O_ASSIGN_OR_RETURN(impl->state_dir,
                         StateDir::Open(o.cache_dir, ModelFingerprint(model),
                                        [s](const std::string& line) { s->log.Line(line); }));
    s->log.Line(fmt::format("{}: {} kept states ({} bytes) to resume from", o.cache_dir,
                            impl->state_dir->size(), impl->state_dir->bytes()));
  }
  impl->scheduler = std::make_unique<Scheduler>(
      *impl->engine, SchedulerOptions{.kv_memory_bytes = o.kv_memory_bytes,
                                      .max_queue = o.max_queue,
                                      .max_running = o.parallel,
                                      .step_tokens = batch,
                                      .prompt_cache_bytes = o.prompt_cache_bytes,
                                      .state_dir = impl->state_dir.get()});
  impl->Routes();
  Impl* s = impl.get();
  HttpServerOptions http;
  http.limits = o.http;
  http.handler_threads = kHandlerThreads;
  http.error_body = [](int status, const std::string& message) {
    return ErrorBody({status, message, status >= 500 ? "server_error" : "invalid_request_error",
                      "", ""});
  };
  http.log = [s](const std::string& line) { s->log.Line(line); };
  impl->http = std::make_unique<HttpServer>(
      std::move(http), [s](HttpRequest req, std::shared_ptr<HttpExchange> ex) {
        s->Handle(std::move(req), ex);
      });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Status Server::Run(const std::function<void(int)>& on_listening) {
  Impl& s = *impl_;
  H2O_ASSIGN_OR_RETURN(const int port, s.http->Listen(s.options.host, s.options.port));
  std::thread driver([&s] { s.DriverLoop(); });
  if (on_listening) on_listening(port);
  s.http->Run();  // returns after Shutdown, once running requests are answered
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stop_driver = true;
  }
  s.wake.notify_one();
  driver.join();
  if (s.state_dir) {
    const size_t written = s.scheduler->PersistPromptCache();
    s.log.Line(fmt::format("wrote {} kept states to {}", written, s.options.cache_dir));
  }
  return Status::Ok();
}

void Server::Shutdown() {
  impl_->draining = true;
  impl_->http->Stop();
}

}  // namespace h2o::server
