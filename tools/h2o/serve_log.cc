#include "serve_log.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/byte_size.h"
#include "kernels/dispatch.h"

namespace h2o::cli {
namespace {

// "2026-12-07T17:04:05.123Z".
std::string UtcNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", text, static_cast<int>(ms));
}

double TokensPerSecond(const server::RequestRecord& r) {
  const double decode = r.total_s - r.ttft_s;
  return r.completion_tokens > 1 && decode > 0 ? (r.completion_tokens - 1) / decode : 0;
}

std::string RequestText(const server::RequestRecord& r) {
  return fmt::format(
      "{} {} {}: prompt {} tokens ({} reused), generated {}, first token {:.1f} ms, {:.1f} tok/s, "
      "total {:.1f} ms, KV {} ({}), {} evicted, finish {}",
      r.status, r.endpoint, r.id, r.prompt_tokens, r.cached_tokens, r.completion_tokens,
      r.ttft_s * 1e3, TokensPerSecond(r), r.total_s * 1e3, FormatBytes(r.kv_bytes), r.kv,
      r.evictions, r.finish_reason);
}

}  // namespace

void ServeLog::Info(const std::string& message) const {
  if (!quiet_) Write("info", message, nullptr);
}

void ServeLog::Line(const std::string& message) const { Write("info", message, nullptr); }

void ServeLog::Request(const server::RequestRecord& record) const {
  if (!quiet_) Write(record.status == 200 ? "info" : "error", RequestText(record), &record);
}

void ServeLog::Write(const std::string& level, const std::string& message,
                     const server::RequestRecord* r) const {
  std::string out;
  if (format_ == LogFormat::kText) {
    out = "h2o serve: " + message + "\n";
  } else {
    nlohmann::json j = {{"time", UtcNow()}, {"level", level}, {"msg", message}};
    if (r != nullptr) {
      j["event"] = "request";
      j["id"] = r->id;
      j["endpoint"] = r->endpoint;
      j["status"] = r->status;
      j["prompt_tokens"] = r->prompt_tokens;
      j["cached_tokens"] = r->cached_tokens;
      j["completion_tokens"] = r->completion_tokens;
      j["ttft_ms"] = r->ttft_s * 1e3;
      j["total_ms"] = r->total_s * 1e3;
      j["tokens_per_second"] = TokensPerSecond(*r);
      j["kv_bytes"] = r->kv_bytes;
      j["kv"] = r->kv;
      j["evictions"] = r->evictions;
      j["finish_reason"] = r->finish_reason;
    }
    // Client text (refusals quote it) may hold invalid UTF-8: replaced, so
    // every line stays one JSON object.
    out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::fputs(out.c_str(), stderr);
  std::fflush(stderr);
}

std::vector<std::string> BannerLines(const server::ServerOptions& o, const Model& model,
                                     const std::string& kv_resolved, const std::string& kv_types) {
  const HParams& hp = model.hparams();
  size_t weight_bytes = 0;
  for (const gguf::TensorInfo& t : model.file().tensors()) weight_bytes += t.nbytes;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("{}, {} kernels, {} threads, {} tokens a step", o.build_info,
                              kernels::ActiveKernels().name, o.n_threads, o.batch_tokens));
  lines.push_back(fmt::format(
      "model {}: {}, {} layers, n_embd {}, {} heads ({} KV heads), vocab {}, {} of weights",
      o.model_path, hp.arch, hp.n_layer, hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_vocab,
      FormatBytes(static_cast<double>(weight_bytes))));
  lines.push_back(fmt::format("context {} tokens a sequence (trained {}); KV {} ({} at {}), {}",
                              o.sequence.n_ctx, hp.n_ctx_train, o.default_kv.text, kv_resolved,
                              o.sequence.n_ctx, kv_types));
  lines.push_back(fmt::format(
      "KV memory {} (--kv-mem), prompt cache {}{}, sequences at once: {}, {} waiting at most",
      FormatBytes(static_cast<double>(o.kv_memory_bytes)),
      o.prompt_cache_bytes == 0 ? std::string("off")
                                : FormatBytes(static_cast<double>(o.prompt_cache_bytes)),
      o.cache_dir.empty() ? std::string() : ", states kept in " + o.cache_dir,
      o.parallel == 0 ? std::string("as many as fit") : std::to_string(o.parallel), o.max_queue));
  lines.push_back(o.chat_template
                      ? std::string("chat template ") + ChatTemplateName(*o.chat_template)
                      : std::string("chat: no template (chat requests get 400)"));
  return lines;
}

}  // namespace h2o::cli
