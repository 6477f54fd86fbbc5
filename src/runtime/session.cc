#include "runtime/session.h"

#include <algorithm>

#include <fmt/format.h>

namespace h2o {

Result<std::unique_ptr<Session>> Session::Create(const Model& model,
                                                  const SessionOptions& options) {
  const HParams& hp = model.hparams();
  const int32_t n_ctx = options.n_ctx > 0 ? options.n_ctx : hp.n_ctx_train;
  if (options.n_ctx < 0) return Status::Error(fmt::format("bad context size {}", options.n_ctx));
  if (options.n_threads < 1) {
    return Status::Error(fmt::format("bad thread count {} (need at least 1)", options.n_threads));
  }
  if (options.max_chunk < 0) return Status::Error(fmt::format("bad chunk size {}", options.max_chunk));
  if (options.kv_type != TensorType::kF32 && options.kv_type != TensorType::kF16) {
    return Status::Error("KV cache type must be f32 or f16");
  }
  const int32_t max_chunk = options.max_chunk > 0 ? std::min(options.max_chunk, n_ctx) : n_ctx;

  KvCacheConfig kv;
  kv.n_layer = hp.n_layer;
  kv.n_head_kv = hp.n_head_kv;
  kv.head_dim = hp.head_dim;
  kv.budget = n_ctx;
  kv.capacity = n_ctx;
  kv.type = options.kv_type;
  auto cache = std::make_unique<KvCache>(kv, std::make_unique<FullPolicy>());
  return std::unique_ptr<Session>(
      new Session(model, n_ctx, max_chunk, options.n_threads, std::move(cache)));
}

Session::Session(const Model& model, int32_t n_ctx, int32_t max_chunk, int32_t n_threads,
                 std::unique_ptr<KvCache> cache)
    : model_(model),
      n_ctx_(n_ctx),
      max_chunk_(max_chunk),
      pool_(n_threads),
      cache_(std::move(cache)),
      forward_(model, max_chunk, cache_->config().capacity) {}

Status Session::Eval(std::span<const int32_t> tokens, LogitsFor which) {
  if (tokens.empty()) return Status::Error("no tokens to evaluate");
  const int32_t n_vocab = model_.hparams().n_vocab;
  for (int32_t id : tokens) {
    if (id < 0 || id >= n_vocab) {
      return Status::Error(fmt::format("token id {} is out of range [0, {})", id, n_vocab));
    }
  }
  if (static_cast<int64_t>(n_past_) + static_cast<int64_t>(tokens.size()) > n_ctx_) {
    return Status::Error(fmt::format("context is full: {} + {} tokens exceed the context size {} "
                                     "(raise it with -c)",
                                     n_past_, tokens.size(), n_ctx_));
  }
  if (which == LogitsFor::kAllTokens && tokens.size() > static_cast<size_t>(max_chunk_)) {
    return Status::Error("logits for every token need the tokens to fit in one chunk");
  }
  for (size_t begin = 0; begin < tokens.size(); begin += max_chunk_) {
    const size_t len = std::min(tokens.size() - begin, static_cast<size_t>(max_chunk_));
    forward_.Run(tokens.subspan(begin, len), n_past_, *cache_, which, &pool_);
    n_past_ += static_cast<int32_t>(len);
  }
  return Status::Ok();
}

std::span<const float> Session::logits() const { return forward_.logits(); }

std::span<const float> Session::last_logits() const {
  const auto all = forward_.logits();
  const size_t n_vocab = model_.hparams().n_vocab;
  return all.subspan(all.size() - n_vocab, n_vocab);
}

void Session::Reset() {
  n_past_ = 0;
  cache_->Clear();
}

}  // namespace h2o
