// h2o serve: the OpenAI-compatible server (src/server) on one model.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "chat_template_flag.h"
#include "cli_log.h"
#include "cli_common.h"
#include "cli_errors.h"
#include "commands.h"
#include "core/byte_size.h"
#include "core/strings.h"
#include "serve_log.h"
#include "server/server.h"
#include "version.h"

namespace h2o::cli {
namespace {

struct ServeFlags {
  ModelFlags model;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string kv_mem = "1GiB";
  std::string cache_ram;  // empty: as much of --kv-mem as requests leave free
  bool no_prompt_cache = false;
  std::string cache_dir;
  int32_t parallel = 0;
  int32_t max_queue = 64;
  int32_t batch_tokens = 512;
  std::vector<std::string> api_keys;  // each may hold several, comma-separated
  std::string api_key_file;
  std::string metrics_key;
  bool kv_endpoint = false;
  std::string chat_template;
  std::string max_body = "1MiB";
  std::string max_header_size = "16KiB";
  int32_t max_headers = server::HttpLimits{}.max_header_count;
  int32_t max_connections = server::HttpLimits{}.max_connections;
  double header_timeout = 10, body_timeout = 60, idle_timeout = 5, send_timeout = 60;
  bool verbose = false;
  bool embeddings = false;
  LogFormat log_format = LogFormat::kText;
};

// "cannot listen on HOST:PORT: REASON", with what to do where the reason
// is a port in use or one that needs privileges.
Status ExplainListenError(const Status& status, int port) {
  const std::string& m = status.message();
  if (m.find("Address already in use") != std::string::npos) {
    return Status::Error(fmt::format("{} (another server has port {}: stop it, or choose another "
                                     "port with --port, 0 for any free one)",
                                     m, port));
  }
  if (m.find("Permission denied") != std::string::npos) {
    return Status::Error(fmt::format("{} (ports below 1024 need privileges: choose another with "
                                     "--port)",
                                     m));
  }
  return status;
}

// Seconds as a duration; a year at most (what "never" means here).
std::chrono::milliseconds Seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(s, 365.0 * 86400.0) * 1000.0));
}

// --api-key (repeatable, comma-separated) and --api-key-file (one a line;
// blank lines and '#' comments skipped), as llama-server takes them.
Result<std::vector<std::string>> ApiKeys(const ServeFlags& f) {
  std::vector<std::string> keys;
  for (const std::string& flag : f.api_keys) {
    for (const std::string_view key : SplitCommas(flag)) {
      if (key.empty()) return Status::Error("--api-key: an empty key");
      keys.emplace_back(key);
    }
  }
  if (!f.api_key_file.empty()) {
    H2O_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(f.api_key_file));
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string_view key = Trim(std::string_view(text).substr(start, end - start), " \t\r");
      if (!key.empty() && key[0] != '#') keys.emplace_back(key);
      start = end + 1;
    }
    if (keys.empty()) {
      return Status::Error(fmt::format("--api-key-file {}: no key in it", f.api_key_file));
    }
  }
  return keys;
}

int RunServe(const ServeFlags& f) {
  if (!f.model.kv_dump_path.empty()) return Fail("--kv-dump is for one sequence, not for serve");
  auto kv_mem = ParseByteSize(f.kv_mem);
  if (!kv_mem.ok()) return Fail(kv_mem.status().WithContext("--kv-mem"));
  size_t cache_ram = *kv_mem;
  if (!f.cache_ram.empty()) {
    auto parsed = ParseByteSize(f.cache_ram);
    if (!parsed.ok()) return Fail(parsed.status().WithContext("--cache-ram"));
    cache_ram = *parsed;
  }
  auto max_body = ParseByteSize(f.max_body);
  if (!max_body.ok()) return Fail(max_body.status().WithContext("--max-body"));
  auto max_header = ParseByteSize(f.max_header_size);
  if (!max_header.ok()) return Fail(max_header.status().WithContext("--max-header-size"));
  if (*max_header < 1024) {
    return Fail(fmt::format("--max-header-size must be at least 1KiB, not '{}'", f.max_header_size));
  }
  auto api_keys = ApiKeys(f);
  if (!api_keys.ok()) return Fail(api_keys.status());
  auto spec = ParseKvSpec(f.model.kv_spec);
  if (!spec.ok()) return Fail(spec.status().WithContext("--kv"));
  // Percentages resolve per request (against the server's context, which
  // the model gives); here the options are only checked.
  auto session = MakeSessionOptions(f.model, {int64_t{1000}});
  if (!session.ok()) return Fail(session.status());
  if (!f.cache_dir.empty() && f.no_prompt_cache) {
    return Fail("--cache-dir keeps the prompt cache's states: it does not go with --no-prompt-cache");
  }
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
  o.model_path = f.model.model_path;
  const std::string version = VersionText();
  o.build_info = version.substr(0, version.find('\n'));
  o.sequence = *session;
  o.sequence.n_ctx = static_cast<int32_t>(ContextSize(f.model, model));
  o.default_kv = *spec;
  o.default_keep = f.model.kv_keep;
  o.kv_memory_bytes = *kv_mem;
  o.prompt_cache_bytes = f.no_prompt_cache ? 0 : std::min(cache_ram, *kv_mem);
  o.cache_dir = f.cache_dir;
  o.parallel = f.parallel;
  o.max_queue = f.max_queue;
  o.n_threads = ThreadCount(f.model);
  o.batch_tokens = f.batch_tokens;
  o.api_keys = *api_keys;
  o.metrics_key = f.metrics_key;
  o.kv_endpoint = f.kv_endpoint;
  o.chat_template = *chat;
  o.http.max_body_bytes = *max_body;
  o.http.max_header_bytes = *max_header;
  o.http.max_request_line = std::min(o.http.max_request_line, *max_header);
  o.http.max_header_count = f.max_headers;
  o.http.max_connections = f.max_connections;
  o.http.header_timeout = Seconds(f.header_timeout);
  o.http.body_timeout = Seconds(f.body_timeout);
  o.http.idle_timeout = Seconds(f.idle_timeout);
  o.http.send_timeout = Seconds(f.send_timeout);
  const ServeLog log(f.log_format, Quiet());
  o.log = [&log](const std::string& line) { log.Line(line); };
  o.on_request = [&log](const server::RequestRecord& r) { log.Request(r); };
  o.verbose = f.verbose;
  o.embeddings = f.embeddings;

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
        log.Line("draining (running requests finish)");
        (*server)->Shutdown();
        return;
      }
    }
  });
  // Printed once the port is bound: a server that cannot listen says only why.
  auto resolved = ResolveKvSpec(*spec, o.sequence.n_ctx);
  const std::vector<std::string> banner = BannerLines(
      o, model, resolved.ok() ? resolved->Describe() : resolved.status().message(),
      KvTypeName(f.model));
  const Status status = (*server)->Run([&](int port) {
    for (const std::string& line : banner) log.Info(line);
    log.Line(fmt::format("listening on http://{}:{}", f.host, port));
  });
  done = true;
  watcher.join();
  if (!status.ok()) return Fail(ExplainListenError(status, f.port));
  log.Line("stopped");
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
  cmd->add_option("--cache-ram", f->cache_ram,
                  "most memory for the prompt cache: finished requests' KV states, which a "
                  "request starting with the same tokens resumes (default: what --kv-mem has "
                  "free; it always gives way to requests)");
  cmd->add_flag("--no-prompt-cache", f->no_prompt_cache,
                "keep no finished request's state: every request feeds its whole prompt");
  cmd->add_option("--cache-dir", f->cache_dir,
                  "keep the prompt cache's states that RAM drops, and all of them at shutdown, "
                  "in DIR (a restart resumes from them), and the conversations POST "
                  "/slots/{id}?action=save names");
  cmd->add_option("--parallel", f->parallel,
                  "most sequences at once (0: as many as --kv-mem holds)")
      ->capture_default_str();
  cmd->add_option("--queue", f->max_queue, "most requests waiting; more get 503")
      ->capture_default_str();
  cmd->add_option("--batch-tokens", f->batch_tokens,
                  "tokens per forward pass, all sequences together")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--api-key", f->api_keys,
                  "require 'Authorization: Bearer KEY' on /v1/* (repeat it or separate keys "
                  "with commas for several; a request's cache is readable with its own key only)");
  cmd->add_option("--api-key-file", f->api_key_file, "API keys, one a line")
      ->check(CLI::ExistingFile);
  cmd->add_option("--metrics-key", f->metrics_key,
                  "require 'Authorization: Bearer KEY' on /metrics");
  cmd->add_flag("--kv-endpoint", f->kv_endpoint,
                "keep every request's cache readable at GET /v1/kv/{id} (without it, only those "
                "of requests that ask with \"kv_endpoint\": true, as the playground does)");
  AddChatTemplateFlag(*cmd, f->chat_template);
  cmd->add_option("--max-body", f->max_body,
                  "largest request body, Content-Length or chunked (413 beyond)")
      ->capture_default_str();
  cmd->add_option("--max-header-size", f->max_header_size,
                  "largest request line and headers together (431 beyond)")
      ->capture_default_str();
  // Counts and seconds: positive, their defaults shown.
  auto positive = [cmd](const std::string& name, auto& value, const std::string& help) {
    cmd->add_option(name, value, help)->check(CLI::PositiveNumber)->capture_default_str();
  };
  positive("--max-headers", f->max_headers, "most header fields in a request (431 beyond)");
  positive("--max-connections", f->max_connections,
           "most open connections; at the cap the longest-idle, then the slowest-sending one is "
           "closed for a new one");
  positive("--header-timeout", f->header_timeout,
           "seconds from a connection's start (or its last response) to the end of a request's "
           "headers (408 beyond)");
  positive("--body-timeout", f->body_timeout,
           "seconds from the end of the headers to the end of the body (408 beyond)");
  positive("--idle-timeout", f->idle_timeout, "seconds an idle keep-alive connection stays open");
  positive("--send-timeout", f->send_timeout,
           "seconds a response may make no progress (a client not reading) before its connection "
           "closes and its request is cancelled");
  cmd->add_flag("--embeddings", f->embeddings,
                "answer POST /v1/embeddings: each input's final hidden states, mean-pooled and "
                "normalized (as llama-server's --embeddings)");
  cmd->add_flag("--verbose", f->verbose,
                "also log every HTTP request as it arrives and each completion's parameters");
  cmd->add_option("--log-format", f->log_format,
                  "text, or json: one JSON object a line (time, level, msg; a request's "
                  "figures as fields)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, LogFormat>{{"text", LogFormat::kText}, {"json", LogFormat::kJson}}))
      ->capture_default_str();
  return {cmd, [f] { return RunServe(*f); }};
}

}  // namespace h2o::cli
