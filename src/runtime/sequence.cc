#include "runtime/sequence.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>

#include "kv/policy_registry.h"
#include "runtime/kv_config.h"
#include "runtime/kv_fit.h"

namespace h2o {
namespace {

uint64_t NextSequenceId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

namespace {

struct Resolved {
  SequenceOptions options;  // n_ctx and max_chunk resolved
  KvCacheConfig kv;
};

Result<Resolved> Resolve(const Model& model, const SequenceOptions& options,
                         int32_t max_chunk_limit) {
  const HParams& hp = model.hparams();
  const int32_t n_ctx = options.n_ctx > 0 ? options.n_ctx : hp.n_ctx_train;
  if (options.n_ctx < 0) return Status::Error(fmt::format("bad context size {}", options.n_ctx));
  if (options.max_chunk < 0) {
    return Status::Error(fmt::format("bad chunk size {}", options.max_chunk));
  }
  H2O_RETURN_IF_ERROR(CheckKvTypes(options.kv_types, hp.head_dim));
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
  const bool evicts = PolicyEvicts(options.kv.policy);
  if (options.kv_pos_shift) H2O_RETURN_IF_ERROR(CheckPosShift(options.kv.policy));
  if (evicts && options.kv.budget < 1) {
    return Status::Error(
        fmt::format("KV budget of '{}' must be at least 1 token", options.kv.Describe()));
  }
  int32_t max_chunk = options.max_chunk > 0 ? options.max_chunk : n_ctx;
  if (!options.kv_pos_shift) max_chunk = std::min(max_chunk, n_ctx);
  if (max_chunk_limit > 0) max_chunk = std::min(max_chunk, max_chunk_limit);
  Resolved r;
  r.options = options;
  r.options.n_ctx = n_ctx;
  r.options.max_chunk = max_chunk;
  r.kv = SessionKvConfig(hp, options.kv, n_ctx, max_chunk, options.kv_pos_shift, options.kv_types);
  return r;
}

}  // namespace

Result<std::unique_ptr<Sequence>> Sequence::Create(const Model& model,
                                                   const SequenceOptions& options,
                                                   int32_t max_chunk_limit) {
  H2O_ASSIGN_OR_RETURN(Resolved r, Resolve(model, options, max_chunk_limit));
  auto policy = MakePolicy(r.options.kv, r.options.n_ctx);
  H2O_RETURN_IF_ERROR(CheckKvCacheFits(r.kv, *policy, MachineMemoryBytes()));
  auto cache = std::make_unique<KvCache>(r.kv, std::move(policy));
  if (r.options.commit_kv_rows) cache->CommitRows();
  return std::unique_ptr<Sequence>(new Sequence(model, r.options, std::move(cache)));
}

Result<size_t> Sequence::KvBytes(const Model& model, const SequenceOptions& options,
                                 int32_t max_chunk_limit) {
  H2O_ASSIGN_OR_RETURN(Resolved r, Resolve(model, options, max_chunk_limit));
  const auto policy = MakePolicy(r.options.kv, r.options.n_ctx);
  // Only the size_t overflow: a figure to print need not fit this machine.
  H2O_RETURN_IF_ERROR(CheckKvCacheFits(r.kv, *policy, 0));
  return KvCache::AllocatedBytesFor(r.kv, *policy);
}

Sequence::Sequence(const Model& model, const SequenceOptions& resolved,
                   std::unique_ptr<KvCache> cache)
    : model_(model),
      id_(NextSequenceId()),
      n_ctx_(resolved.n_ctx),
      max_chunk_(resolved.max_chunk),
      pos_shift_(resolved.kv_pos_shift),
      kv_plan_(resolved.kv),
      kv_plan_text_(kv_plan_.Describe()),
      n_vocab_(static_cast<size_t>(model.hparams().n_vocab)),
      cache_(std::move(cache)),
      ropes_(model.LayerRopes(resolved.n_ctx)),
      logits_(n_vocab_) {}

std::span<const float> Sequence::last_logits() const {
  H2O_CHECK(logits_rows_ >= 1);
  return {logits_.data() + (logits_rows_ - 1) * n_vocab_, n_vocab_};
}

float* Sequence::LogitsBuffer(size_t rows) {
  if (logits_.size() < rows * n_vocab_) logits_.resize(rows * n_vocab_);
  logits_rows_ = rows;
  return logits_.data();
}

bool Sequence::HasRoomFor(int64_t n_tokens) const {
  const int64_t limit = pos_shift_ ? std::numeric_limits<int32_t>::max() : n_ctx_;
  return n_past_ + n_tokens <= limit;
}

void Sequence::Reset() {
  n_past_ = 0;
  cache_->Clear();
}

void Sequence::ContinueFrom(const Sequence& from) {
  H2O_CHECK(&from.model_ == &model_);
  Reset();
  cache_->AppendKept(*from.cache_);
  n_past_ = from.n_past_;
}

void Sequence::SaveState(SequenceState& state) const {
  if (state.cache.policy == nullptr || state.cache.policy->name() != cache_->policy().name()) {
    state.cache.policy = MakePolicy(kv_plan_, n_ctx_);
  }
  cache_->SaveState(state.cache);
  state.kv_plan = kv_plan_text_;
  state.n_past = n_past_;
  state.pos_shift = pos_shift_;
  if (logits_rows_ >= 1) {
    const std::span<const float> last = last_logits();
    state.last_logits.assign(last.begin(), last.end());
  } else {
    state.last_logits.clear();
  }
}

bool Sequence::CanLoadState(const SequenceState& state) const {
  return state.kv_plan == kv_plan_text_ && state.pos_shift == pos_shift_ &&
         (pos_shift_ || state.n_past <= n_ctx_) && state.last_logits.size() % n_vocab_ == 0 &&
         state.last_logits.size() <= n_vocab_ && cache_->CanLoadState(state.cache);
}

void Sequence::LoadState(const SequenceState& state) {
  H2O_CHECK(CanLoadState(state));
  cache_->LoadState(state.cache);
  n_past_ = state.n_past;
  logits_rows_ = 0;
  if (!state.last_logits.empty()) {
    std::copy(state.last_logits.begin(), state.last_logits.end(), LogitsBuffer(1));
  }
}

void Sequence::Save(SequenceSnapshot& snapshot) const {
  if (snapshot.cache == nullptr || snapshot.sequence_id != id_) {
    snapshot.cache = std::make_unique<KvCache>(cache_->config(), MakePolicy(kv_plan_, n_ctx_));
    snapshot.sequence_id = id_;
  }
  snapshot.cache->CopyFrom(*cache_);
  snapshot.n_past = n_past_;
}

void Sequence::Restore(const SequenceSnapshot& snapshot) {
  H2O_CHECK(snapshot.sequence_id == id_ && snapshot.n_past >= 0);
  cache_->CopyFrom(*snapshot.cache);
  n_past_ = snapshot.n_past;
}

}  // namespace h2o
