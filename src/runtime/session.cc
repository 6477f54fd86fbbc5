#include "runtime/session.h"

#include <fmt/format.h>

#include <algorithm>

namespace h2o {

Result<std::unique_ptr<Session>> Session::Create(const Model& model,
                                                 const SessionOptions& options) {
  // The engine's activations are sized for the sequence's chunk: resolve it
  // as Sequence::Create does (its own checks report bad values).
  const int32_t n_ctx = options.n_ctx > 0 ? options.n_ctx : model.hparams().n_ctx_train;
  int32_t chunk = options.max_chunk > 0 ? options.max_chunk : n_ctx;
  if (!options.kv_pos_shift) chunk = std::min(chunk, n_ctx);
  EngineOptions engine_options;
  engine_options.n_threads = options.n_threads;
  engine_options.max_batch_tokens = std::max(1, chunk);
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(model, engine_options));
  H2O_ASSIGN_OR_RETURN(std::unique_ptr<Sequence> sequence, engine->NewSequence(options));
  return std::unique_ptr<Session>(new Session(std::move(engine), std::move(sequence)));
}

}  // namespace h2o
