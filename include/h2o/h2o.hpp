// h2o.cpp's C++ interface: owning classes over the C interface (h2o.h), in
// one header, so that a C++ program and a binding see the same library and
// no internal header leaks. Failures throw h2o::Error, which carries the C
// interface's code and message; the thread-safety rules are h2o.h's (a
// Model may be shared by threads, a Session, a Sampler one at a time).
//
//   h2o::Model model = h2o::Model::Load("models/stories260K.gguf");
//   h2o::SessionParams params;
//   params.kv = "h2o:heavy=32,recent=32";
//   h2o::Session session(model, params);
//   std::vector<int32_t> ids = session.Generate(model.Tokenize("Once upon a time"), {});
//   std::string text = model.Detokenize(ids);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "h2o/h2o.h"

namespace h2o {
// The public classes' own namespace (inline: users write h2o::Model), so
// that they never share a symbol with the library's internals.
inline namespace public_api {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // an H2O_ERR_* value

 private:
  int code_;
};

namespace detail {
inline void Check(int code) {
  if (code != H2O_OK) throw Error(code, h2o_last_error());
}
template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
}  // namespace detail

struct ModelParams {
  int32_t n_threads = 0;  // threads that repack at load; 0: every hardware thread
  bool repack = true;
};

class Model {
 public:
  static Model Load(const std::string& path, const ModelParams& params = {}) {
    h2o_model_params p = h2o_model_default_params();
    p.n_threads = params.n_threads;
    p.repack = params.repack;
    h2o_model* m = nullptr;
    detail::Check(h2o_model_load(path.c_str(), &p, &m));
    return Model(m);
  }

  int32_t n_vocab() const { return h2o_model_n_vocab(get()); }
  int32_t n_ctx_train() const { return h2o_model_n_ctx_train(get()); }
  int32_t n_layer() const { return h2o_model_n_layer(get()); }
  std::string arch() const { return h2o_model_arch(get()); }
  bool has_vocab() const { return h2o_model_has_vocab(get()); }
  bool IsEndOfGeneration(int32_t token) const { return h2o_token_is_eog(get(), token); }

  std::vector<int32_t> Tokenize(std::string_view text, bool add_special = true) const {
    std::vector<int32_t> ids(text.size() + 2);
    int32_t n = h2o_tokenize(get(), text.data(), text.size(), ids.data(),
                             static_cast<int32_t>(ids.size()), add_special);
    if (n < 0 && n != INT32_MIN) {
      ids.resize(static_cast<size_t>(-n));
      n = h2o_tokenize(get(), text.data(), text.size(), ids.data(), -n, add_special);
    }
    if (n < 0) throw Error(H2O_ERR_INVALID_ARGUMENT, h2o_last_error());
    ids.resize(static_cast<size_t>(n));
    return ids;
  }

  std::string Detokenize(std::span<const int32_t> ids, bool remove_special = true) const {
    std::string text(ids.size() * 8 + 1, '\0');
    const auto n_ids = static_cast<int32_t>(ids.size());
    int32_t n = h2o_detokenize(get(), ids.data(), n_ids, text.data(),
                               static_cast<int32_t>(text.size()), remove_special);
    if (n < 0 && n != INT32_MIN) {
      text.resize(static_cast<size_t>(-n));
      n = h2o_detokenize(get(), ids.data(), n_ids, text.data(), -n, remove_special);
    }
    if (n < 0) throw Error(H2O_ERR_INVALID_ARGUMENT, h2o_last_error());
    text.resize(static_cast<size_t>(n));
    return text;
  }

  const h2o_model* get() const { return model_.get(); }

 private:
  explicit Model(h2o_model* m) : model_(m) {}
  std::unique_ptr<h2o_model, detail::Deleter<h2o_model, h2o_model_free>> model_;
};

// The runtime's sampling (h2o_sampler_params); greedy by default here.
struct SamplerParams {
  float temperature = 0.0f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.0f;
  float repeat_penalty = 1.0f;
  int32_t repeat_last_n = 64;
  uint64_t seed = 0;

  h2o_sampler_params c() const {
    return {temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed};
  }
};

class Sampler {
 public:
  explicit Sampler(const SamplerParams& params = {}) {
    const h2o_sampler_params p = params.c();
    h2o_sampler* s = nullptr;
    detail::Check(h2o_sampler_create(&p, &s));
    sampler_.reset(s);
  }
  int32_t Sample(std::span<const float> logits) {
    return h2o_sampler_sample(sampler_.get(), logits.data(), static_cast<int32_t>(logits.size()));
  }
  void Accept(int32_t token) { h2o_sampler_accept(sampler_.get(), token); }

 private:
  std::unique_ptr<h2o_sampler, detail::Deleter<h2o_sampler, h2o_sampler_free>> sampler_;
};

struct SessionParams {
  int32_t n_ctx = 0;      // 0: the model's training context
  int32_t n_threads = 0;  // 0: every hardware thread
  int32_t max_chunk = 0;  // tokens per forward pass; 0: n_ctx
  std::string kv = "full";  // the CLI's --kv grammar
  int64_t prompt_len = 0;   // what percentages in kv are of; 0: none
  std::string kv_type_k = "f16";
  std::string kv_type_v = "f16";
  bool kv_pos_shift = false;
};

struct GenerateParams {
  int32_t max_tokens = 128;
  bool stop_at_eog = true;
  SamplerParams sampling;  // greedy unless set
};

struct KvStats {
  int32_t n_layer = 0, n_head_kv = 0, budget = 0;
  int64_t tokens_kept = 0;
  int32_t min_head_kept = 0, max_head_kept = 0;
  size_t allocated_bytes = 0, full_cache_bytes = 0;
  std::string policy;
};

class Session {
 public:
  Session(const Model& model, const SessionParams& params = {}) : n_vocab_(model.n_vocab()) {
    h2o_session_params p = h2o_session_default_params();
    p.n_ctx = params.n_ctx;
    p.n_threads = params.n_threads;
    p.max_chunk = params.max_chunk;
    p.kv = params.kv.c_str();
    p.prompt_len = params.prompt_len;
    p.kv_type_k = params.kv_type_k.c_str();
    p.kv_type_v = params.kv_type_v.c_str();
    p.kv_pos_shift = params.kv_pos_shift;
    h2o_session* s = nullptr;
    detail::Check(h2o_session_create(model.get(), &p, &s));
    session_.reset(s);
  }

  void Eval(std::span<const int32_t> tokens, bool all_logits = false) {
    detail::Check(h2o_session_eval(session_.get(), tokens.data(),
                                   static_cast<int32_t>(tokens.size()), all_logits));
  }
  // Row i of the last Eval's logits (-1: the last row).
  std::span<const float> Logits(int32_t i = -1) const {
    const float* row = h2o_session_logits(session_.get(), i);
    if (row == nullptr) throw Error(H2O_ERR_INVALID_ARGUMENT, "no logits row " + std::to_string(i));
    return {row, static_cast<size_t>(n_vocab_)};
  }
  // The next token after the last Eval, by `sampler` (which it accepts).
  int32_t Sample(Sampler& sampler) {
    const int32_t id = sampler.Sample(Logits());
    sampler.Accept(id);
    return id;
  }
  // Each token's negative log-likelihood given those before it.
  std::vector<double> Score(std::span<const int32_t> tokens) {
    std::vector<double> nll(tokens.empty() ? 0 : tokens.size() - 1);
    detail::Check(h2o_session_score(session_.get(), tokens.data(),
                                    static_cast<int32_t>(tokens.size()), nll.data()));
    return nll;
  }
  // Resets, feeds the prompt and generates (h2o_generate).
  std::vector<int32_t> Generate(std::span<const int32_t> prompt, const GenerateParams& params) {
    h2o_generate_params p = h2o_generate_default_params();
    p.max_tokens = params.max_tokens;
    p.stop_at_eog = params.stop_at_eog;
    p.sampling = params.sampling.c();
    std::vector<int32_t> out(static_cast<size_t>(params.max_tokens));
    int32_t n = 0;
    detail::Check(h2o_generate(session_.get(), prompt.data(), static_cast<int32_t>(prompt.size()),
                               &p, out.data(), static_cast<int32_t>(out.size()), &n));
    out.resize(static_cast<size_t>(n));
    return out;
  }
  KvStats kv_stats() const {
    h2o_kv_stats st{};
    detail::Check(h2o_session_kv_stats(session_.get(), &st));
    return {st.n_layer,       st.n_head_kv,       st.budget,
            st.tokens_kept,   st.min_head_kept,   st.max_head_kept,
            st.allocated_bytes, st.full_cache_bytes, st.policy};
  }
  int32_t n_past() const { return h2o_session_n_past(session_.get()); }
  int32_t n_ctx() const { return h2o_session_n_ctx(session_.get()); }
  void Reset() { h2o_session_reset(session_.get()); }

  h2o_session* get() { return session_.get(); }

 private:
  int32_t n_vocab_;
  std::unique_ptr<h2o_session, detail::Deleter<h2o_session, h2o_session_free>> session_;
};

}  // namespace public_api
}  // namespace h2o
