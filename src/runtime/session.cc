#include "runtime/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "runtime/kv_config.h"

namespace h2o {

namespace {

uint64_t NextSessionId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Result<std::unique_ptr<Session>> Session::Create(const Model& model,
                                                 const SessionOptions& options) {
  const HParams& hp = model.hparams();
  const int32_t n_ctx = options.n_ctx > 0 ? options.n_ctx : hp.n_ctx_train;
  if (options.n_ctx < 0) return Status::Error(fmt::format("bad context size {}", options.n_ctx));
  if (options.n_threads < 1) {
    return Status::Error(fmt::format("bad thread count {} (need at least 1)", options.n_threads));
  }
  if (options.max_chunk < 0)
    return Status::Error(fmt::format("bad chunk size {}", options.max_chunk));
  if (options.kv_type != TensorType::kF32 && options.kv_type != TensorType::kF16) {
    return Status::Error("KV cache type must be f32 or f16");
  }
  if (!hp.spec->rotary()) {
    // Learned positions: a row of position_embd per position, no rotation.
    if (options.kv_pos_shift) {
      return Status::Error(
          fmt::format("--kv-pos-shift re-rotates keys; {} has learned positions", hp.arch));
    }
    if (n_ctx > hp.n_ctx_train) {
      return Status::Error(fmt::format("context size {} exceeds the {} positions {} has learned",
                                       n_ctx, hp.n_ctx_train, hp.arch));
    }
  }
  const bool evicts = options.kv.policy != "full";
  if (options.kv_pos_shift && options.kv.policy != "sink" && options.kv.policy != "h2o") {
    return Status::Error(fmt::format(
        "--kv-pos-shift applies to the sink and h2o policies, not '{}'", options.kv.policy));
  }
  if (evicts && options.kv.budget < 1) {
    return Status::Error(
        fmt::format("KV budget of '{}' must be at least 1 token", options.kv.Describe()));
  }
  int32_t max_chunk = options.max_chunk > 0 ? options.max_chunk : n_ctx;
  if (!options.kv_pos_shift) max_chunk = std::min(max_chunk, n_ctx);

  const KvCacheConfig kv =
      SessionKvConfig(hp, options.kv, n_ctx, max_chunk, options.kv_pos_shift, options.kv_type);
  auto cache = std::make_unique<KvCache>(kv, MakePolicy(options.kv, n_ctx));
  SessionOptions resolved = options;
  resolved.n_ctx = n_ctx;
  resolved.max_chunk = max_chunk;
  return std::unique_ptr<Session>(new Session(model, resolved, std::move(cache)));
}

Session::Session(const Model& model, const SessionOptions& options, std::unique_ptr<KvCache> cache)
    : model_(model),
      id_(NextSessionId()),
      n_ctx_(options.n_ctx),
      max_chunk_(options.max_chunk),
      unbounded_positions_(options.kv_pos_shift),
      kv_plan_(options.kv),
      pool_(options.n_threads),
      cache_(std::move(cache)),
      forward_(model, options.max_chunk, cache_->config().max_capacity(), options.n_ctx,
               options.kv_pos_shift, options.n_threads) {}

Status Session::Eval(std::span<const int32_t> tokens, LogitsFor which) {
  if (tokens.empty()) return Status::Error("no tokens to evaluate");
  const int32_t n_vocab = model_.hparams().n_vocab;
  for (int32_t id : tokens) {
    if (id < 0 || id >= n_vocab) {
      return Status::Error(fmt::format("token id {} is out of range [0, {})", id, n_vocab));
    }
  }
  const int64_t end = static_cast<int64_t>(n_past_) + static_cast<int64_t>(tokens.size());
  if (end > (unbounded_positions_ ? INT32_MAX : n_ctx_)) {
    return Status::Error(
        fmt::format("context is full: {} + {} tokens exceed the context size {} "
                    "(raise it with -c, or use --kv-pos-shift with sink or h2o)",
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

void Session::Save(SessionSnapshot& snapshot) const {
  if (snapshot.cache == nullptr || snapshot.session_id != id_) {
    snapshot.cache = std::make_unique<KvCache>(cache_->config(), MakePolicy(kv_plan_, n_ctx_));
    snapshot.session_id = id_;
  }
  snapshot.cache->CopyFrom(*cache_);
  snapshot.n_past = n_past_;
}

void Session::Restore(const SessionSnapshot& snapshot) {
  H2O_CHECK(snapshot.session_id == id_ && snapshot.n_past >= 0);
  cache_->CopyFrom(*snapshot.cache);
  n_past_ = snapshot.n_past;
}

void Session::Reset() {
  n_past_ = 0;
  cache_->Clear();
}

}  // namespace h2o
