// The bundled model behind a real h2o serve on a free port of 127.0.0.1,
// in the test's process: what the server's HTTP tests share.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "runtime/engine.h"
#include "runtime/generate.h"
#include "server/server.h"
#include "test_data.h"
#include "tokenizer/gguf_vocab.h"

namespace h2o::server::testing {

using nlohmann::json;

inline const Model& Stories() {
  static const auto model = Model::Load(h2o::testing::ModelPath()).value();
  return *model;
}

inline const Tokenizer& StoriesTokenizer() {
  static const Tokenizer tokenizer = LoadTokenizerFromGguf(Stories().file()).value();
  return tokenizer;
}

// What the runtime's generate loop gives alone for these ids and this
// policy (greedy): what a request to the server must give.
inline Generation GreedyAlone(const std::vector<int32_t>& ids, const std::string& kv,
                              int32_t max_tokens, bool stop_at_end = true) {
  auto engine = Engine::Create(Stories(), {.n_threads = 1, .max_batch_tokens = 64}).value();
  SequenceOptions o;
  o.n_ctx = static_cast<int32_t>(ids.size()) + max_tokens;
  o.max_chunk = 64;
  o.kv = ResolveKvSpec(ParseKvSpec(kv).value(), o.n_ctx).value();
  auto sequence = engine->NewSequence(o).value();
  GenerateOptions g;
  g.max_tokens = max_tokens;
  g.sampling.temperature = 0.0f;
  g.stop_at_end = stop_at_end;
  return Generate(*engine, *sequence, ids, g, &StoriesTokenizer()).value();
}

// A server on a free port, running until the fixture ends.
class Running {
 public:
  explicit Running(ServerOptions o = Defaults()) {
    server_ = Server::Create(Stories(), StoriesTokenizer(), std::move(o)).value();
    std::atomic<int> port{0};
    thread_ = std::thread([&] {
      const Status s = server_->Run([&](int p) { port = p; });
      EXPECT_TRUE(s.ok()) << s.message();
    });
    while (port == 0) std::this_thread::yield();
    port_ = port;
  }
  ~Running() {
    server_->Shutdown();
    thread_.join();
  }
  static ServerOptions Defaults() {
    ServerOptions o;
    o.port = 0;
    o.model_id = "stories260K";
    o.sequence.n_ctx = 512;
    o.sequence.max_chunk = 64;
    o.default_kv = ParseKvSpec("full").value();
    o.n_threads = 2;
    o.chat_template = ChatTemplate::kChatml;
    o.http.max_body_bytes = 64 * 1024;
    return o;
  }
  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  Server& server() { return *server_; }
  json Post(const std::string& path, const json& body) const {
    auto r = Client().Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(r) << "no response: " << httplib::to_string(r.error());
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body);
  }
  std::string Metric(const std::string& name) const {
    auto r = Client().Get("/metrics");
    const std::string& text = r->body;
    const size_t at = text.find("\n" + name + " ");
    return at == std::string::npos
               ? ""
               : text.substr(at + name.size() + 2, text.find('\n', at + 1) - at - name.size() - 2);
  }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// POSTs body to path, handing each received piece of the response to
// `receive` (return false to hang up). Returns whether it completed.
template <typename Receive>
bool PostStreaming(httplib::Client client, const std::string& path, const json& body,
                   Receive receive) {
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    return receive(data, n);
  };
  return static_cast<bool>(client.send(req));
}

// The data lines of an SSE body.
inline std::vector<std::string> SseData(const std::string& body) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    out.push_back(body.substr(at + 6, end - at - 6));
    at = end;
  }
  return out;
}

}  // namespace h2o::server::testing
