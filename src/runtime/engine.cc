#include "runtime/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace h2o {
namespace {

// Ids in range and room in the context for them: what makes feeding
// `tokens` to `sequence` fail, checked before anything is fed.
Status CheckTokens(const Model& model, const Sequence& sequence, std::span<const int32_t> tokens) {
  if (tokens.empty()) return Status::Error("no tokens to evaluate");
  const int32_t n_vocab = model.hparams().n_vocab;
  for (const int32_t id : tokens) {
    if (id < 0 || id >= n_vocab) {
      return Status::Error(fmt::format("token id {} is out of range [0, {})", id, n_vocab));
    }
  }
  if (!sequence.HasRoomFor(static_cast<int64_t>(tokens.size()))) {
    return Status::Error(fmt::format(
        "context is full: {} + {} tokens exceed the context size {} (raise it with -c, or use "
        "--kv-pos-shift with sink or h2o)",
        sequence.n_past(), tokens.size(), sequence.n_ctx()));
  }
  return Status::Ok();
}

// Index of the first NaN or Inf among n floats, or n. The exponent bits are
// tested in blocks of integer compares the compiler vectorizes (a plain
// isfinite loop was 2% of a 32-sequence decode step).
size_t FirstNonFinite(const float* x, size_t n) {
  constexpr size_t kBlock = 64;
  constexpr uint32_t kExponent = 0x7f800000u;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t bad = 0;
    for (size_t j = 0; j < kBlock; ++j) {
      uint32_t bits;
      std::memcpy(&bits, x + i + j, sizeof(bits));
      bad |= (bits & kExponent) == kExponent ? 1u : 0u;
    }
    if (bad != 0) break;
  }
  for (; i < n; ++i) {
    if (!std::isfinite(x[i])) return i;
  }
  return n;
}

// A NaN or Inf logit would be sampled as garbage or scored as a NaN
// perplexity far from its cause; one pass over what the forward pass just
// wrote is cheap next to the n_embd multiply-adds behind each logit.
Status CheckLogitsFinite(const ForwardItem& item, size_t n_vocab) {
  const size_t rows = item.which == LogitsFor::kAllTokens ? item.tokens.size() : 1;
  for (size_t r = 0; r < rows; ++r) {
    const float* row = item.logits + r * n_vocab;
    if (const size_t i = FirstNonFinite(row, n_vocab); i < n_vocab) {
      const float v = row[i];
      const size_t pos = item.pos0 + (rows == 1 ? item.tokens.size() - 1 : r);
      return Status::Error(fmt::format(
          "the logits for the token at position {} are not finite ({} for id {}): a NaN or Inf in "
          "the weights (--check-tensors scans them) or an overflow in the computation",
          pos, v, i));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Create(const Model& model, const EngineOptions& options) {
  if (options.n_threads < 1) {
    return Status::Error(fmt::format("bad thread count {} (need at least 1)", options.n_threads));
  }
  if (options.max_batch_tokens < 1) {
    return Status::Error(
        fmt::format("bad batch size {} (need at least 1 token)", options.max_batch_tokens));
  }
  return std::unique_ptr<Engine>(new Engine(model, options));
}

Engine::Engine(const Model& model, const EngineOptions& options)
    : model_(model),
      pool_(options.n_threads),
      forward_(model, options.max_batch_tokens, options.n_threads) {}

Result<std::unique_ptr<Sequence>> Engine::NewSequence(const SequenceOptions& options) {
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Sequence> sequence,
                       Sequence::Create(model_, options, forward_.max_rows()));
  forward_.ReserveKvCapacity(sequence->cache().config().max_capacity());
  items_.reserve(items_.size() + 1);
  return sequence;
}

Status Engine::Check(std::span<const BatchItem> batch) const {
  if (batch.empty()) return Status::Error("no tokens to evaluate");
  int64_t rows = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchItem& item = batch[i];
    H2O_CHECK(item.sequence != nullptr && &item.sequence->model() == &model_);
    for (size_t j = 0; j < i; ++j) H2O_CHECK(batch[j].sequence != item.sequence);
    H2O_RETURN_IF_ERROR(CheckTokens(model_, *item.sequence, item.tokens));
    if (item.tokens.size() > static_cast<size_t>(item.sequence->max_chunk())) {
      return Status::Error(fmt::format("{} tokens exceed the sequence's chunk of {}",
                                       item.tokens.size(), item.sequence->max_chunk()));
    }
    rows += static_cast<int64_t>(item.tokens.size());
  }
  if (rows > forward_.max_rows()) {
    return Status::Error(
        fmt::format("{} tokens exceed the engine's batch of {}", rows, forward_.max_rows()));
  }
  return Status::Ok();
}

Status Engine::Forward(std::span<const BatchItem> batch) {
  H2O_RETURN_IF_ERROR(Check(batch));
  items_.clear();
  for (const BatchItem& b : batch) {
    Sequence& s = *b.sequence;
    ForwardItem item;
    item.cache = &s.mutable_cache();
    item.tokens = b.tokens;
    item.pos0 = s.n_past();
    item.ropes = s.ropes();
    item.pos_shift = s.pos_shift();
    item.which = b.which;
    item.observer = s.attention_observer();
    if (b.want_logits) {
      item.logits = s.LogitsBuffer(b.which == LogitsFor::kAllTokens ? b.tokens.size() : 1);
    }
    item.hidden_sum = b.hidden_sum;
    items_.push_back(item);
  }
  forward_.Run(items_, &pool_);
  for (const BatchItem& b : batch) b.sequence->Advance(static_cast<int32_t>(b.tokens.size()));
  const size_t n_vocab = static_cast<size_t>(model_.hparams().n_vocab);
  // Checked on every thread; on a failure, again in batch order, so the
  // first failing item reports.
  std::atomic<bool> any_bad{false};
  pool_.ParallelFor(static_cast<int64_t>(items_.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const ForwardItem& item = items_[i];
      if (item.logits != nullptr && !CheckLogitsFinite(item, n_vocab).ok()) any_bad = true;
    }
  });
  if (!any_bad) return Status::Ok();
  for (const ForwardItem& item : items_) {
    if (item.logits != nullptr) H2O_RETURN_IF_ERROR(CheckLogitsFinite(item, n_vocab));
  }
  return Status::Ok();
}

Status Engine::Eval(Sequence& sequence, std::span<const int32_t> tokens, LogitsFor which) {
  H2O_RETURN_IF_ERROR(CheckTokens(model_, sequence, tokens));
  if (which == LogitsFor::kAllTokens && tokens.size() > static_cast<size_t>(sequence.max_chunk())) {
    return Status::Error("logits for every token need the tokens to fit in one chunk");
  }
  const size_t chunk = static_cast<size_t>(sequence.max_chunk());
  for (size_t begin = 0; begin < tokens.size(); begin += chunk) {
    const size_t len = std::min(tokens.size() - begin, chunk);
    const bool last = begin + len == tokens.size();
    const BatchItem item{&sequence, tokens.subspan(begin, len), which, last};
    H2O_RETURN_IF_ERROR(Forward({&item, 1}));
  }
  return Status::Ok();
}

Result<std::vector<float>> Engine::Embed(Sequence& sequence, std::span<const int32_t> tokens) {
  H2O_RETURN_IF_ERROR(CheckTokens(model_, sequence, tokens));
  if (sequence.n_past() != 0 || sequence.cache().policy().name() != std::string_view("full")) {
    return Status::Error("an embedding needs a fresh sequence with a full cache");
  }
  if (tokens.empty()) return Status::Error("no tokens to embed");
  std::vector<double> sum(static_cast<size_t>(model_.hparams().n_embd), 0.0);
  std::vector<float> chunk_sum(sum.size());
  const size_t chunk = static_cast<size_t>(sequence.max_chunk());
  for (size_t begin = 0; begin < tokens.size(); begin += chunk) {
    const size_t len = std::min(tokens.size() - begin, chunk);
    std::fill(chunk_sum.begin(), chunk_sum.end(), 0.0f);
    const BatchItem item{&sequence, tokens.subspan(begin, len), LogitsFor::kLastToken,
                         /*want_logits=*/false, chunk_sum.data()};
    H2O_RETURN_IF_ERROR(Forward({&item, 1}));
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += chunk_sum[i];
  }
  double norm = 0;
  for (double& v : sum) {
    v /= static_cast<double>(tokens.size());
    norm += v * v;
  }
  norm = std::sqrt(norm);
  if (!std::isfinite(norm)) return Status::Error("the embedding is not finite");
  std::vector<float> out(sum.size());
  for (size_t i = 0; i < sum.size(); ++i) out[i] = static_cast<float>(norm > 0 ? sum[i] / norm : 0);
  return out;
}

}  // namespace h2o
