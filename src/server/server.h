// h2o serve: an OpenAI-compatible HTTP server on the batched engine.
//
// Connections are http_server.h's (bounded by HttpLimits, on one I/O
// thread). Each request is parsed and validated into a CompletionParams
// (api_request.h), turned into a scheduler Request with its own KV policy,
// and submitted; one driver thread runs Scheduler::Step for every sequence
// together, and each request's tokens go from its callback on the driver
// thread straight to its connection, as Server-Sent Events or, at the end,
// one JSON body. A connection that closes or resets, streamed or not,
// cancels its request, which frees its KV memory at the next step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "core/status.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/sequence.h"
#include "server/http_limits.h"
#include "tokenizer/tokenizer.h"

namespace h2o::server {

// One finished completion, for the server's log line per request.
struct RequestRecord {
  std::string id;        // "cmpl-...", "chatcmpl-..."
  std::string endpoint;  // the path asked: "/v1/chat/completions", ...
  int status = 200;      // 200, or 500 where generation failed
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;  // of them, resumed from the prompt cache
  int32_t completion_tokens = 0;
  double ttft_s = 0;   // from the request's arrival to its first token
  double total_s = 0;  // from its arrival to its end
  size_t kv_bytes = 0;
  int64_t evictions = 0;
  std::string kv;  // the resolved policy
  std::string finish_reason;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;       // 0: any free port (reported to on_listening)
  std::string model_id;  // what /v1/models lists and responses name
  std::string model_path;  // what /props reports
  std::string build_info;  // what /props reports (h2o --version's first line)
  // Per sequence: context, prefill chunk, K/V element type. Its kv is
  // ignored: default_kv (--kv) is resolved against the context per request.
  SequenceOptions sequence;
  KvSpec default_kv;
  int64_t default_keep = 0;  // --kv-keep: n_keep of a request without one (-1 allowed)
  size_t kv_memory_bytes = size_t{1} << 30;
  // The prompt cache's most bytes, inside kv_memory_bytes (what requests
  // leave free); 0: no prompt cache.
  size_t prompt_cache_bytes = 0;
  // Non-empty: the prompt cache's disk tier and the named saves of
  // POST /slots/{id}?action=save|restore (runtime/state_dir.h); what RAM
  // drops goes there, and at shutdown whatever RAM holds.
  std::string cache_dir;
  int32_t parallel = 0;    // sequences at once (0: as many as the KV memory holds)
  int32_t max_queue = 64;  // waiting requests beyond this get 503
  int32_t n_threads = 1;
  int32_t batch_tokens = 512;  // tokens per forward pass, all sequences together
  // Non-empty: /v1/* needs "Authorization: Bearer <one of them>", and a
  // request's cache at /v1/kv/{id} is readable with its own key only.
  std::vector<std::string> api_keys;
  std::string metrics_key;  // non-empty: /metrics needs "Authorization: Bearer <it>"
  // Every request's cache readable at /v1/kv/{id}; without it only those
  // of requests that ask ("kv_endpoint": true, as the playground does).
  bool kv_endpoint = false;
  // Answer POST /v1/embeddings (mean-pooled, normalized final hidden
  // states); without it, 501 (llama-server's --embeddings).
  bool embeddings = false;
  std::optional<ChatTemplate> chat_template;  // none: chat requests get a 400
  HttpLimits http;
  // A line for the server log (refusals naming their limit, forced closes);
  // rate-limited by the server. May be empty.
  std::function<void(const std::string& line)> log;
  // Called on the driver thread as each completion ends; may be empty.
  std::function<void(const RequestRecord& record)> on_request;
  // Also log every HTTP request as it arrives, and each completion's
  // resolved parameters (llama-server's --verbose).
  bool verbose = false;
};

class Server {
 public:
  // `model` and `tokenizer` must outlive the server.
  static Result<std::unique_ptr<Server>> Create(const Model& model, const Tokenizer& tokenizer,
                                                ServerOptions options);
  ~Server();

  // Binds, calls on_listening(port), and serves until Shutdown(); then
  // returns once the running requests have finished.
  Status Run(const std::function<void(int port)>& on_listening);

  // Thread-safe (e.g. from a signal watcher): stop accepting connections;
  // requests already running finish and are answered.
  void Shutdown();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace h2o::server
