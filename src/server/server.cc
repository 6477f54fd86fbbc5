#include "server/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "runtime/engine.h"
#include "runtime/log_softmax.h"
#include "runtime/scheduler.h"
#include "server/api_request.h"
#include "server/api_response.h"
#include "server/kv_endpoint.h"
#include "server/kv_state.h"
#include "server/metrics.h"
#include "server/playground_files.h"
#include "server/stop_text.h"

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

// What the driver thread hands a request's connection: a text delta with
// its tokens, or the end.
struct Piece {
  std::string delta;
  std::vector<TokenLogprob> tokens;
  bool finished = false;
  FinishReason reason = FinishReason::kLength;
  std::string error;
  int32_t n_generated = 0;
  size_t kv_bytes = 0;
  int64_t evictions = 0;
};

// One request's queue between the driver thread (producer) and its
// connection thread (consumer).
struct Channel {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Piece> pieces;
  bool finished = false;

  void Push(Piece p) {
    {
      std::lock_guard<std::mutex> lock(mu);
      finished = finished || p.finished;
      pieces.push_back(std::move(p));
    }
    cv.notify_one();
  }
  // Waits up to `timeout` for pieces; returns what arrived.
  std::deque<Piece> Take(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, timeout, [&] { return !pieces.empty(); });
    std::deque<Piece> out;
    out.swap(pieces);
    return out;
  }
};

const char* FinishName(FinishReason r) { return r == FinishReason::kLength ? "length" : "stop"; }

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

}  // namespace

struct Server::Impl {
  const Model& model;
  const Tokenizer& tokenizer;
  ServerOptions options;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<Scheduler> scheduler;
  httplib::Server http;
  Metrics metrics;
  KvStateStore kv_states{kKeepFinishedKv, kKeepFinishedKvBytes};

  std::mutex mu;
  std::condition_variable wake;
  bool work = false;
  bool stop_driver = false;
  std::atomic<bool> draining{false};
  std::atomic<uint64_t> next_id{1};
  socket_t listen_socket = INVALID_SOCKET;
  // Every route's method and path, so that a served path asked with the
  // wrong method (GET /v1/completions) gets 405 and an Allow header, as
  // vLLM's server answers, rather than httplib's 404. Matched without
  // std::regex: instantiated in this (TSan-instrumented) file, its code
  // would also run httplib's own route matching, and TSan would report
  // the library's matching as racing (scripts/tsan.supp).
  struct Route {
    std::string method;
    std::string path;
    bool then_one_segment = false;  // path is a prefix, then one non-empty segment
  };
  std::vector<Route> routes;

  Impl(const Model& m, const Tokenizer& t, ServerOptions o)
      : model(m), tokenizer(t), options(std::move(o)) {}

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

  void DriverLoop() {
    for (;;) {
      if (scheduler->Step()) continue;
      std::unique_lock<std::mutex> lock(mu);
      if (stop_driver) return;
      wake.wait_for(lock, std::chrono::milliseconds(50), [&] { return work || stop_driver; });
      work = false;
    }
  }

  void SendError(httplib::Response& res, const ApiError& e) {
    metrics.request_errors += 1;
    res.status = e.status;
    res.set_content(ErrorBody(e), "application/json");
  }

  void Get(const std::string& path, httplib::Server::Handler handler) {
    routes.push_back({"GET", path});
    http.Get(path, std::move(handler));
  }
  void Post(const std::string& path, httplib::Server::Handler handler) {
    routes.push_back({"POST", path});
    http.Post(path, std::move(handler));
  }
  // The methods `path` is served with, comma-separated; empty for a path
  // no route serves.
  std::string AllowedMethods(const std::string& path) const {
    std::string allowed;
    for (const Route& route : routes) {
      const bool match = route.then_one_segment
                             ? path.size() > route.path.size() && path.starts_with(route.path) &&
                                   path.find('/', route.path.size()) == std::string::npos
                             : path == route.path;
      if (!match || allowed.find(route.method) != std::string::npos) continue;
      allowed += allowed.empty() ? route.method : ", " + route.method;
    }
    return allowed;
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
      const int32_t n_vocab = model.hparams().n_vocab;
      for (int32_t id : ids) {
        if (id >= n_vocab) {
          return ApiError{
              400, fmt::format("token id {} is not below the vocabulary size {}", id, n_vocab),
              "invalid_request_error", "prompt", ""};
        }
      }
    } else {
      ids = tokenizer.Encode(p.prompt_text, /*add_special=*/true);
    }
    if (ids.empty())
      return ApiError{400, "the prompt has no tokens", "invalid_request_error", "prompt", ""};
    return std::nullopt;
  }

  void HandleCompletion(const httplib::Request& req, httplib::Response& res, bool chat) {
    metrics.requests += 1;
    if (draining) {
      SendError(res, {503, "the server is shutting down", "server_error", "", ""});
      return;
    }
    auto params = std::make_shared<CompletionParams>();
    if (auto e = ParseCompletionRequest(req.body, chat, *params)) {
      SendError(res, *e);
      return;
    }
    std::vector<int32_t> prompt;
    if (auto e = PromptIds(*params, prompt)) {
      SendError(res, *e);
      return;
    }
    const int32_t n_ctx = ContextSize();
    const int64_t n_prompt = static_cast<int64_t>(prompt.size());
    if (n_prompt >= n_ctx || (params->max_tokens && n_prompt + *params->max_tokens > n_ctx)) {
      SendError(res, {400,
                      fmt::format("{} prompt tokens + {} to generate exceed the context of {} "
                                  "tokens",
                                  n_prompt, params->max_tokens.value_or(1), n_ctx),
                      "invalid_request_error", params->max_tokens ? "max_tokens" : "prompt",
                      "context_length_exceeded"});
      return;
    }
    // Unset: the rest of the context, but at most kDefaultMaxTokens, so a
    // full-cache request on a long-context model does not reserve (and
    // wait for) the KV memory of its whole context.
    const int32_t max_tokens = params->max_tokens.value_or(
        static_cast<int32_t>(std::min<int64_t>(n_ctx - n_prompt, kDefaultMaxTokens)));

    KvSpec spec = options.default_kv;
    if (!params->kv.empty()) {
      auto parsed = ParseKvSpec(params->kv);
      if (!parsed.ok()) {
        SendError(res, {400, parsed.status().message(), "invalid_request_error", "kv", ""});
        return;
      }
      spec = *parsed;
    }
    auto plan = ResolveKvSpec(spec, n_prompt + max_tokens);
    if (!plan.ok()) {
      SendError(res, {400, plan.status().message(), "invalid_request_error", "kv", ""});
      return;
    }

    Request request;
    request.prompt = prompt;
    request.sequence = options.sequence;
    request.sequence.n_ctx = static_cast<int32_t>(n_prompt + max_tokens);
    request.sequence.kv = *plan;
    request.sampling.temperature = params->temperature;
    request.sampling.top_p = params->top_p;
    request.sampling.top_k = params->top_k;
    request.sampling.seed = params->seed.value_or(
        static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^ next_id.load());
    request.max_tokens = max_tokens;
    if (!params->ignore_eos) {
      request.is_end = [this](int32_t id) { return tokenizer.IsEndOfGeneration(id); };
    }
    ResponseHeader header;
    header.id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", next_id++);
    std::shared_ptr<KvStateStore::Tracker> kv_state = kv_states.Track(header.id, prompt);
    request.on_cache = [kv_state](const Sequence& sequence, bool final) {
      kv_state->OnCache(sequence, final);
    };
    auto channel = std::make_shared<Channel>();
    auto stop = std::make_shared<StopText>(params->stop);
    const int32_t top_n = params->logprobs ? params->top_logprobs : -1;
    // On the driver thread: pieces become text deltas here, so a stop
    // string ends the sequence at the token that completed it.
    request.on_event = [this, channel, stop, top_n, kv_state](const TokenEvent& e) {
      Piece p;
      if (e.finished) {
        kv_state->Done();
        p.delta = stop->Finish();
        p.finished = true;
        p.reason = e.reason;
        p.error = e.error;
        p.n_generated = e.n_generated;
        p.kv_bytes = e.kv_bytes;
        p.evictions = e.evictions;
        channel->Push(std::move(p));
        return true;
      }
      metrics.generated_tokens += 1;
      kv_state->AddToken(e.token);
      const std::string piece = tokenizer.TokenToPiece(e.token);
      p.delta = stop->Add(piece);
      if (top_n >= 0) p.tokens.push_back(Logprobs(tokenizer, e.logits, e.token, top_n));
      channel->Push(std::move(p));
      return !stop->stopped();
    };
    auto id = scheduler->Submit(std::move(request));
    if (!id.ok()) {
      kv_state->Done();
      const bool full = id.status().message().find("queue is full") != std::string::npos;
      SendError(res, {full ? 503 : 400, id.status().message(),
                      full ? "server_error" : "invalid_request_error", "", ""});
      return;
    }
    metrics.prompt_tokens += n_prompt;
    Wake();

    const uint64_t request_id = *id;
    const std::string kv_text = plan->Describe();
    // The playground reads the id here, before the first token (a long
    // prompt's prefill), to watch the cache fill.
    res.set_header("X-Request-Id", header.id);
    header.created = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    header.model = options.model_id;
    const std::string echo =
        params->echo && !chat ? tokenizer.Decode(prompt, /*remove_special=*/true) : std::string();

    auto usage_of = [n_prompt, kv_text](const Piece& end) {
      Usage u;
      u.prompt_tokens = static_cast<int32_t>(n_prompt);
      u.completion_tokens = end.n_generated;
      u.kv_bytes = end.kv_bytes;
      u.evictions = end.evictions;
      u.kv = kv_text;
      return u;
    };

    // Both kinds of response are written by a content provider on this
    // connection's thread, so a failed write (the client left) cancels the
    // request. A whole response waits with spaces (valid before JSON) as
    // its heartbeat.
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    auto cancel = [this, request_id, cancelled] {
      if (cancelled->exchange(true)) return;
      metrics.cancelled += 1;
      scheduler->Cancel(request_id);
      Wake();
    };
    // A response that ended before its request did (the connection broke
    // between writes) cancels it too.
    auto release = [cancel, channel](bool success) {
      bool done;
      {
        std::lock_guard<std::mutex> lock(channel->mu);
        done = channel->finished;
      }
      if (!success && !done) cancel();
    };
    if (params->stream) {
      auto first = std::make_shared<bool>(true);
      auto offset = std::make_shared<size_t>(0);
      res.set_header("Cache-Control", "no-cache");
      res.set_header("X-Accel-Buffering", "no");
      res.set_chunked_content_provider(
          "text/event-stream",
          [=](size_t, httplib::DataSink& sink) {
            if (*first && !echo.empty()) {
              const std::string out =
                  SseEvent(ChunkBody(*params, header, echo, {}, 0, nullptr, true));
              *first = false;
              *offset = echo.size();
              if (!sink.write(out.data(), out.size())) {
                cancel();
                return false;
              }
            }
            for (;;) {
              for (Piece& p : channel->Take(std::chrono::milliseconds(1000))) {
                std::string out;
                if (p.finished && p.reason == FinishReason::kError) {
                  out = SseEvent(ErrorBody({500, p.error, "server_error", "", ""}));
                } else {
                  if (!p.delta.empty() || !p.tokens.empty() || *first) {
                    out = SseEvent(
                        ChunkBody(*params, header, p.delta, p.tokens, *offset, nullptr, *first));
                    *first = false;
                    *offset += p.delta.size();
                  }
                  if (p.finished) {
                    out += SseEvent(
                        ChunkBody(*params, header, "", {}, *offset, FinishName(p.reason), false));
                    if (params->include_usage) {
                      out += SseEvent(UsageChunkBody(*params, header, usage_of(p)));
                    }
                  }
                }
                if (p.finished) {
                  out += "data: [DONE]\n\n";
                  sink.write(out.data(), out.size());
                  sink.done();
                  return true;
                }
                if (!out.empty() && !sink.write(out.data(), out.size())) {
                  cancel();
                  return false;
                }
              }
              if (!sink.is_writable()) {
                cancel();
                return false;
              }
            }
          },
          release);
      return;
    }
    res.set_chunked_content_provider(
        "application/json",
        [=](size_t, httplib::DataSink& sink) {
          std::string text = echo;
          std::vector<TokenLogprob> tokens;
          for (;;) {
            std::deque<Piece> pieces = channel->Take(std::chrono::milliseconds(1000));
            for (Piece& p : pieces) {
              text += p.delta;
              for (TokenLogprob& t : p.tokens) tokens.push_back(std::move(t));
              if (!p.finished) continue;
              const std::string body =
                  p.reason == FinishReason::kError
                      ? ErrorBody({500, p.error, "server_error", "", ""})
                      : CompletionBody(*params, header, text, echo.size(), tokens,
                                       FinishName(p.reason), usage_of(p));
              sink.write(body.data(), body.size());
              sink.done();
              return true;
            }
            if (pieces.empty() && !sink.write(" ", 1)) {
              cancel();
              return false;
            }
          }
        },
        release);
  }

  void HandleKv(const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    const HParams& hp = model.hparams();
    std::optional<int32_t> layer;
    const std::optional<std::string> layer_text =
        req.has_param("layer") ? std::optional<std::string>(req.get_param_value("layer"))
                               : std::nullopt;
    if (auto e = ParseKvLayer(layer_text, hp.n_layer, layer)) {
      SendError(res, *e);
      return;
    }
    auto state = kv_states.Get(id, kKvSnapshotWait, [this] { Wake(); });
    if (!state) {
      SendError(res, {404,
                      fmt::format("no request '{}' (unknown, or finished more than {} requests "
                                  "ago)",
                                  id, kKeepFinishedKv),
                      "invalid_request_error", "", "request_not_found"});
      return;
    }
    res.set_header("Cache-Control", "no-store");
    res.set_content(KvStateBody(id, state->get(), layer, hp.n_layer, hp.n_head_kv, tokenizer),
                    "application/json");
  }

  void Routes() {
    http.set_payload_max_length(options.max_body_bytes);
    // Debian's compiled cpp-httplib listens with a backlog of 5: a burst of
    // clients connecting at once would wait a second for SYN retries. The
    // socket is kept here so Run can raise it.
    http.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_socket = sock;
    });
    // A proxy's keepalive pool (deploy/) reuses connections for many requests.
    http.set_keep_alive_max_count(1000);
    const int threads = std::max(16, options.max_queue + 8);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (options.api_key.empty() || req.path.rfind("/v1/", 0) != 0) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      if (req.get_header_value("Authorization") != "Bearer " + options.api_key) {
        SendError(res, {401, "invalid or missing API key (Authorization: Bearer KEY)",
                        "invalid_request_error", "", "invalid_api_key"});
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (const std::string allowed = AllowedMethods(req.path);
          res.status == 404 && !allowed.empty()) {
        res.set_header("Allow", allowed);
        SendError(
            res,
            {405, fmt::format("{} {}: method not allowed (use {})", req.method, req.path, allowed),
             "invalid_request_error", "", ""});
        return;
      }
      ApiError e{res.status, fmt::format("{} {}: HTTP {}", req.method, req.path, res.status),
                 res.status >= 500 ? "server_error" : "invalid_request_error", "", ""};
      if (res.status == 413) {
        e.message = fmt::format("the request body is larger than {} bytes", options.max_body_bytes);
      }
      res.set_content(ErrorBody(e), "application/json");
    });
    Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(json({{"status", draining ? "draining" : "ok"}}).dump(), "application/json");
    });
    Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      json model_entry = {
          {"id", options.model_id}, {"object", "model"}, {"created", 0}, {"owned_by", "h2o.cpp"}};
      res.set_content(json({{"object", "list"}, {"data", json::array({model_entry})}}).dump(),
                      "application/json");
    });
    Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.Render(scheduler->Stats()), "text/plain; version=0.0.4");
    });
    routes.push_back({"GET", "/v1/kv/", /*then_one_segment=*/true});
    http.Get(R"(/v1/kv/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      HandleKv(req, res);
    });
    for (const StaticFile& file : PlaygroundFiles()) {
      Get(std::string(file.path), [file](const httplib::Request&, httplib::Response& res) {
        res.set_content(file.body.data(), file.body.size(), std::string(file.content_type));
      });
    }
    Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      HandleCompletion(req, res, /*chat=*/false);
    });
    Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      HandleCompletion(req, res, /*chat=*/true);
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
  impl->scheduler = std::make_unique<Scheduler>(
      *impl->engine, SchedulerOptions{.kv_memory_bytes = o.kv_memory_bytes,
                                      .max_queue = o.max_queue,
                                      .max_running = o.parallel,
                                      .step_tokens = batch});
  impl->Routes();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Status Server::Run(const std::function<void(int)>& on_listening) {
  Impl& s = *impl_;
  const int port =
      s.options.port == 0
          ? s.http.bind_to_any_port(s.options.host)
          : (s.http.bind_to_port(s.options.host, s.options.port) ? s.options.port : -1);
  if (port < 0) {
    return Status::Error(fmt::format("cannot listen on {}:{}", s.options.host, s.options.port));
  }
  if (s.listen_socket != INVALID_SOCKET) ::listen(s.listen_socket, SOMAXCONN);
  std::thread driver([&s] { s.DriverLoop(); });
  if (on_listening) on_listening(port);
  s.http.listen_after_bind();  // returns after Shutdown, once running requests are answered
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stop_driver = true;
  }
  s.wake.notify_one();
  driver.join();
  return Status::Ok();
}

void Server::Shutdown() {
  impl_->draining = true;
  impl_->http.stop();
}

}  // namespace h2o::server
