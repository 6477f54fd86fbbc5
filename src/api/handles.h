// What the C interface's opaque handles are: the runtime's objects, plus
// what a C caller needs kept alive between calls (the tokenizer, a
// returned string's storage).
#pragma once
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "core/status.h"
#include "h2o/h2o.h"
#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tokenizer/tokenizer.h"

struct h2o_model {
  std::unique_ptr<h2o::Model> model;
  std::optional<h2o::Tokenizer> tokenizer;  // none when the file has no vocabulary
};

struct h2o_session {
  const h2o_model* model = nullptr;
  std::unique_ptr<h2o::Session> session;
};

struct h2o_sampler {
  explicit h2o_sampler(const h2o::SamplerOptions& options) : sampler(options) {}
  h2o::Sampler sampler;
};

namespace h2o::api {

// Records `message` as this thread's h2o_last_error() and returns `code`.
int Fail(int code, const std::string& message);
inline int Fail(int code, const Status& status) { return Fail(code, status.message()); }
// fn(), with an exception (memory ran out; nothing else throws across the
// interface) turned into a code: no exception leaves a C call.
template <typename Fn>
int Guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Fail(H2O_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return Fail(H2O_ERR_EVAL, e.what());
  }
}

// H2O_OK, clearing nothing: the last error stays until the next failure.
constexpr int kOk = H2O_OK;

// The runtime's sampler options from the C struct.
SamplerOptions SamplerOptionsOf(const h2o_sampler_params& p);

}  // namespace h2o::api
