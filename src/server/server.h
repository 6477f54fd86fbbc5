// h2o serve: an OpenAI-compatible HTTP server on the batched engine.
//
// The HTTP layer is thin: each request is parsed and validated into a
// CompletionParams (api_request.h), turned into a scheduler Request with
// its own KV policy, and submitted; one driver thread runs Scheduler::Step
// for every sequence together, and each request's tokens come back through
// a per-request channel to the connection's thread, which writes them as a
// JSON body or as Server-Sent Events. A connection that closes cancels its
// request, which frees its KV memory at the next step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "chat/chat_template.h"
#include "core/status.h"
#include "kv/kv_spec.h"
#include "model/model.h"
#include "runtime/sequence.h"
#include "tokenizer/tokenizer.h"

namespace h2o::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;       // 0: any free port (reported to on_listening)
  std::string model_id;  // what /v1/models lists and responses name
  // Per sequence: context, prefill chunk, K/V element type. Its kv is
  // ignored: default_kv (--kv) is resolved against the context per request.
  SequenceOptions sequence;
  KvSpec default_kv;
  size_t kv_memory_bytes = size_t{1} << 30;
  int32_t parallel = 0;    // sequences at once (0: as many as the KV memory holds)
  int32_t max_queue = 64;  // waiting requests beyond this get 503
  int32_t n_threads = 1;
  int32_t batch_tokens = 512;  // tokens per forward pass, all sequences together
  std::string api_key;         // non-empty: /v1/* needs "Authorization: Bearer <key>"
  std::optional<ChatTemplate> chat_template;  // none: chat requests get a 400
  size_t max_body_bytes = size_t{1} << 20;
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
