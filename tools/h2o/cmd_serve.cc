// h2o serve: the OpenAI-compatible server (src/server) on one model.
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "chat_template_flag.h"
#include "cli_common.h"
#include "cli_errors.h"
#include "commands.h"
#include "core/byte_size.h"
#include "server/server.h"

namespace h2o::cli {
namespace {

struct ServeFlags {
  ModelFlags model;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string kv_mem = "1GiB";
  int32_t parallel = 0;
  int32_t max_queue = 64;
  int32_t batch_tokens = 512;
  std::string api_key;
  std::string chat_template;
  std::string max_body = "1MiB";
};

int RunServe(const ServeFlags& f) {
  if (!f.model.kv_dump_path.empty()) return Fail("--kv-dump is for one sequence, not for serve");
  auto kv_mem = ParseByteSize(f.kv_mem);
  if (!kv_mem.ok()) return Fail(kv_mem.status().WithContext("--kv-mem"));
  auto max_body = ParseByteSize(f.max_body);
  if (!max_body.ok()) return Fail(max_body.status().WithContext("--max-body"));
  auto spec = ParseKvSpec(f.model.kv_spec);
  if (!spec.ok()) return Fail(spec.status().WithContext("--kv"));
  // Percentages resolve per request (against its prompt + max_tokens);
  // here the options are only checked.
  auto session = MakeSessionOptions(f.model, int64_t{1000});
  if (!session.ok()) return Fail(session.status());
  if (f.parallel < 0) return Fail(fmt::format("--parallel must be 0 or more, not {}", f.parallel));
  if (f.max_queue < 1) return Fail(fmt::format("--queue must be 1 or more, not {}", f.max_queue));

  auto model_result = LoadModel(f.model);
  if (!model_result.ok()) return Fail(model_result.status());
  const Model& model = **model_result;
  auto tokenizer = LoadTokenizer(model);
  if (!tokenizer.ok()) return Fail(tokenizer.status());
  auto chat = PickChatTemplate(f.chat_template, model);
  if (!chat.ok()) return Fail(chat.status());

  server::ServerOptions o;
  o.host = f.host;
  o.port = f.port;
  o.model_id = std::filesystem::path(f.model.model_path).stem().string();
  o.sequence = *session;
  o.sequence.n_ctx = session->n_ctx > 0 ? session->n_ctx : model.hparams().n_ctx_train;
  o.default_kv = *spec;
  o.kv_memory_bytes = *kv_mem;
  o.parallel = f.parallel;
  o.max_queue = f.max_queue;
  o.n_threads = ThreadCount(f.model);
  o.batch_tokens = f.batch_tokens;
  o.api_key = f.api_key;
  o.chat_template = *chat;
  o.max_body_bytes = *max_body;

  // SIGINT/SIGTERM are taken by a watcher thread (blocked everywhere else,
  // so the server's threads inherit the mask): it drains the server.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto server = server::Server::Create(model, *tokenizer, o);
  if (!server.ok()) return Fail(server.status());
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    const timespec tick{0, 200'000'000};
    while (!done) {
      if (sigtimedwait(&signals, nullptr, &tick) > 0) {
        std::fprintf(stderr, "h2o serve: draining (running requests finish)\n");
        (*server)->Shutdown();
        return;
      }
    }
  });
  const Status status = (*server)->Run([&](int port) {
    std::fprintf(stderr, "h2o serve: listening on http://%s:%d\n", f.host.c_str(), port);
    std::fflush(stderr);
  });
  done = true;
  watcher.join();
  if (!status.ok()) return Fail(status);
  std::fprintf(stderr, "h2o serve: stopped\n");
  return 0;
}

}  // namespace

Command RegisterServe(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "an OpenAI-compatible HTTP server (/v1/completions, /v1/chat/completions)");
  // Half the step: a whole prompt chunk and as many decode tokens share one.
  AddModelFlags(*cmd, f->model, /*default_chunk=*/256);
  cmd->get_option("--kv")->check(OnePolicy("serve"));
  cmd->add_option("--host", f->host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", f->port, "port (0: any free one, printed when listening)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--kv-mem", f->kv_mem,
                  "KV memory all running sequences share; requests wait until theirs fits")
      ->capture_default_str();
  cmd->add_option("--parallel", f->parallel,
                  "most sequences at once (0: as many as --kv-mem holds)")
      ->capture_default_str();
  cmd->add_option("--queue", f->max_queue, "most requests waiting; more get 503")
      ->capture_default_str();
  cmd->add_option("--batch-tokens", f->batch_tokens,
                  "tokens per forward pass, all sequences together")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--api-key", f->api_key, "require 'Authorization: Bearer KEY' on /v1/*");
  AddChatTemplateFlag(*cmd, f->chat_template);
  cmd->add_option("--max-body", f->max_body, "largest request body")->capture_default_str();
  return {cmd, [f] { return RunServe(*f); }};
}

}  // namespace h2o::cli
