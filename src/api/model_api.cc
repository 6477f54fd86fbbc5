// The C interface's model and token calls.
#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include "api/handles.h"
#include "tokenizer/gguf_vocab.h"

using h2o::api::Fail;
using h2o::api::Guarded;

namespace {

int32_t HardwareThreads() {
  return static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

extern "C" {

h2o_model_params h2o_model_default_params(void) {
  h2o_model_params p{};
  p.n_threads = 0;
  p.repack = true;
  return p;
}

int h2o_model_load(const char* path, const h2o_model_params* params, h2o_model** out) {
  if (path == nullptr || out == nullptr) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_model_load: path and out must not be NULL");
  }
  *out = nullptr;
  const h2o_model_params p = params ? *params : h2o_model_default_params();
  if (p.n_threads < 0) {
    return Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_model_load: n_threads must be >= 0");
  }
  return Guarded([&]() -> int {
    h2o::ModelLoadOptions options;
    options.repack = p.repack;
    options.n_threads = p.n_threads > 0 ? p.n_threads : HardwareThreads();
    auto model = h2o::Model::Load(path, options);
    if (!model.ok()) return Fail(H2O_ERR_LOAD, model.status());
    auto handle = std::make_unique<h2o_model>();
    handle->model = std::move(model).value();
    // A file without a vocabulary still runs on token ids.
    if (auto tokenizer = h2o::LoadTokenizerFromGguf(handle->model->file()); tokenizer.ok()) {
      handle->tokenizer.emplace(std::move(tokenizer).value());
    }
    *out = handle.release();
    return H2O_OK;
  });
}

void h2o_model_free(h2o_model* model) { delete model; }

int32_t h2o_model_n_vocab(const h2o_model* m) { return m ? m->model->hparams().n_vocab : 0; }
int32_t h2o_model_n_ctx_train(const h2o_model* m) {
  return m ? m->model->hparams().n_ctx_train : 0;
}
int32_t h2o_model_n_layer(const h2o_model* m) { return m ? m->model->hparams().n_layer : 0; }
int32_t h2o_model_n_head_kv(const h2o_model* m) { return m ? m->model->hparams().n_head_kv : 0; }
const char* h2o_model_arch(const h2o_model* m) {
  return m ? m->model->hparams().arch.c_str() : "";
}

bool h2o_model_has_vocab(const h2o_model* m) { return m && m->tokenizer.has_value(); }
int32_t h2o_token_bos(const h2o_model* m) {
  return h2o_model_has_vocab(m) ? m->tokenizer->bos_id() : -1;
}
int32_t h2o_token_eos(const h2o_model* m) {
  return h2o_model_has_vocab(m) ? m->tokenizer->eos_id() : -1;
}
bool h2o_token_is_eog(const h2o_model* m, int32_t token) {
  return h2o_model_has_vocab(m) && m->tokenizer->IsEndOfGeneration(token);
}

int32_t h2o_tokenize(const h2o_model* m, const char* text, size_t text_len, int32_t* tokens,
                     int32_t n_tokens_max, bool add_special) {
  if (m == nullptr || (text == nullptr && text_len > 0) || n_tokens_max < 0 ||
      (tokens == nullptr && n_tokens_max > 0)) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_tokenize: NULL model, text or tokens");
    return INT32_MIN;
  }
  if (!m->tokenizer) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_tokenize: the model's file has no vocabulary");
    return INT32_MIN;
  }
  const std::vector<int32_t> ids = m->tokenizer->Encode({text ? text : "", text_len}, add_special);
  if (ids.size() > static_cast<size_t>(INT32_MAX)) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_tokenize: more than INT32_MAX tokens");
    return INT32_MIN;
  }
  const auto n = static_cast<int32_t>(ids.size());
  if (n > n_tokens_max) return -n;
  std::copy(ids.begin(), ids.end(), tokens);
  return n;
}

int32_t h2o_detokenize(const h2o_model* m, const int32_t* tokens, int32_t n_tokens, char* buf,
                       int32_t buf_size, bool remove_special) {
  if (m == nullptr || n_tokens < 0 || (tokens == nullptr && n_tokens > 0) || buf_size < 0 ||
      (buf == nullptr && buf_size > 0)) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_detokenize: NULL model, tokens or buf");
    return INT32_MIN;
  }
  if (!m->tokenizer) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_detokenize: the model's file has no vocabulary");
    return INT32_MIN;
  }
  const int32_t n_vocab = m->tokenizer->n_vocab();
  for (int32_t i = 0; i < n_tokens; ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_detokenize: token " + std::to_string(tokens[i]) +
                                         " is outside the vocabulary [0, " +
                                         std::to_string(n_vocab) + ")");
      return INT32_MIN;
    }
  }
  const std::string text =
      m->tokenizer->Decode(std::vector<int32_t>(tokens, tokens + n_tokens), remove_special);
  if (text.size() >= static_cast<size_t>(INT32_MAX)) {
    Fail(H2O_ERR_INVALID_ARGUMENT, "h2o_detokenize: the text passes INT32_MAX bytes");
    return INT32_MIN;
  }
  const auto needed = static_cast<int32_t>(text.size()) + 1;
  if (needed > buf_size) return -needed;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  return needed - 1;
}

}  // extern "C"
