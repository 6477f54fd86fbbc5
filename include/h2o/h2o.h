/* h2o.cpp's C interface: load a GGUF model, tokenize, run a sequence under
 * a KV eviction policy, read its logits, sample, generate, and see what its
 * cache holds. Every binding (python/h2o) wraps this; the C++ classes in
 * h2o.hpp are a header over it.
 *
 * Conventions
 *   - Handles are opaque and owned by the caller: each create or load call that
 *     returns H2O_OK hands over one, freed by its free call (which ignores NULL).
 *   - Calls that can fail return an int: H2O_OK (0), or one of the negative
 *     H2O_ERR_* codes below, and then nothing was changed unless the code
 *     says so. h2o_last_error() gives the failure's one-line message.
 *   - Parameter structs have a defaults function; take its value and set
 *     what differs, so that fields added later keep their defaults.
 *   - Thread safety: a model is immutable once loaded; any number of
 *     threads may use it and create sessions from it at once. A session is
 *     used by one thread at a time (it has its own worker threads inside).
 *     A model must outlive its sessions.
 *   - Token ids are int32_t; a text is UTF-8 bytes with a length (no NUL
 *     terminator needed). */
#ifndef H2O_H
#define H2O_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define H2O_API __declspec(dllexport)
#else
#define H2O_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
enum {
  H2O_OK = 0,
  /* An argument is wrong: a NULL handle or buffer, a value out of its range,
   * a KV spec or type that does not parse, a token id outside the
   * vocabulary. Nothing was done. */
  H2O_ERR_INVALID_ARGUMENT = -1,
  /* The model file is missing, unreadable, or not a model h2o runs. */
  H2O_ERR_LOAD = -2,
  /* The tokens would take the sequence past its context (n_ctx); nothing
   * was fed. Reset the session, or create it with a larger n_ctx or with
   * kv_pos_shift. */
  H2O_ERR_CONTEXT_FULL = -3,
  /* The forward pass failed (e.g. non-finite logits); the session is then
   * part-fed and must be reset. */
  H2O_ERR_EVAL = -4,
  /* A buffer was too small; the function says what it wrote. */
  H2O_ERR_BUFFER_TOO_SMALL = -5,
  /* Memory ran out (e.g. a KV cache larger than RAM and swap). */
  H2O_ERR_OUT_OF_MEMORY = -6,
};

typedef struct h2o_model h2o_model;
typedef struct h2o_session h2o_session;
typedef struct h2o_sampler h2o_sampler;

/* The message of the last failed call on this thread ("" when none). The
 * pointer stays valid until the thread's next failing call. */
H2O_API const char *h2o_last_error(void);

/* The library's version, e.g. "0.1.0". */
H2O_API const char *h2o_version(void);

/* ---- model ------------------------------------------------------------ */

typedef struct h2o_model_params {
  /* Threads that repack the weights at load; 0: every hardware thread. */
  int32_t n_threads;
  /* Repack weight matrices into the kernels' panels at load (faster, at the
   * cost of private memory instead of shared file pages). Default true. */
  bool repack;
} h2o_model_params;

H2O_API h2o_model_params h2o_model_default_params(void);

/* Loads a GGUF file. params may be NULL (defaults). On H2O_OK *out holds the
 * model; otherwise H2O_ERR_LOAD (or _INVALID_ARGUMENT for NULL path/out). */
H2O_API int h2o_model_load(const char *path, const h2o_model_params *params, h2o_model **out);
H2O_API void h2o_model_free(h2o_model *model);

H2O_API int32_t h2o_model_n_vocab(const h2o_model *model);
/* The context the model was trained with (its GGUF's context_length). */
H2O_API int32_t h2o_model_n_ctx_train(const h2o_model *model);
H2O_API int32_t h2o_model_n_layer(const h2o_model *model);
H2O_API int32_t h2o_model_n_head_kv(const h2o_model *model);
/* The architecture's name as the GGUF gives it ("llama", "qwen2", ...). */
H2O_API const char *h2o_model_arch(const h2o_model *model);

/* ---- tokens ----------------------------------------------------------- */

/* Whether the model's file has a vocabulary (a llama2.c conversion without
 * --tokenizer has none: then only token ids work). */
H2O_API bool h2o_model_has_vocab(const h2o_model *model);
H2O_API int32_t h2o_token_bos(const h2o_model *model); /* -1 when none */
H2O_API int32_t h2o_token_eos(const h2o_model *model); /* -1 when none */
/* Whether generation ends at this token (EOS, EOT, <|im_end|>, ...). */
H2O_API bool h2o_token_is_eog(const h2o_model *model, int32_t token);

/* Tokenizes text as `h2o tokenize` does: add_special puts BOS (and EOS)
 * where the vocabulary asks for them; special tokens written in the text
 * are recognized. Returns the number of tokens written to tokens, or, when
 * n_tokens_max is too small, minus the number needed (nothing written), as
 * llama_tokenize does. INT32_MIN on any other error (h2o_last_error). */
H2O_API int32_t h2o_tokenize(const h2o_model *model, const char *text, size_t text_len,
                             int32_t *tokens, int32_t n_tokens_max, bool add_special);

/* Writes the text of the tokens to buf, NUL terminated, as `h2o generate`
 * prints it (remove_special: without a leading BOS and a trailing EOS where
 * the vocabulary adds them; other special tokens as spelled). Returns its length without the NUL, or, when buf_size is too
 * small, minus the size needed (NUL included). INT32_MIN on other errors. */
H2O_API int32_t h2o_detokenize(const h2o_model *model, const int32_t *tokens, int32_t n_tokens,
                               char *buf, int32_t buf_size, bool remove_special);

/* ---- session: one sequence and its KV cache ---------------------------- */

typedef struct h2o_session_params {
  int32_t n_ctx;     /* most positions; 0: the model's training context */
  int32_t n_threads; /* 0: every hardware thread */
  /* Most tokens per forward pass (the batch size); 0: n_ctx. */
  int32_t max_chunk;
  /* The KV policy, as the CLI's --kv: "full", "h2o:heavy=64,recent=64",
   * "snapkv:k=128", ... Percentages need prompt_len. NULL: "full". */
  const char *kv;
  /* What percentages in kv are of (the prompt's length); 0: none given. */
  int64_t prompt_len;
  /* K and V element types, as --kv-type-k/-v ("f16", "q8_0", ...). NULL:
   * f16. */
  const char *kv_type_k;
  const char *kv_type_v;
  /* Re-rotate kept keys to their rank in the cache (sink, h2o): positions
   * then never pass the cache, and a sequence may run past n_ctx. */
  bool kv_pos_shift;
} h2o_session_params;

H2O_API h2o_session_params h2o_session_default_params(void);

/* Creates a session of the model; params may be NULL (defaults). Errors:
 * H2O_ERR_INVALID_ARGUMENT (the message names the parameter). */
H2O_API int h2o_session_create(const h2o_model *model, const h2o_session_params *params,
                               h2o_session **out);
H2O_API void h2o_session_free(h2o_session *session);

/* Feeds tokens at the next positions, in chunks of at most max_chunk,
 * evicting over the policy's budget after each chunk. Afterwards
 * h2o_session_logits gives the last token's logits, or with all_logits
 * (requires n_tokens <= max_chunk) every fed token's. Errors:
 * H2O_ERR_INVALID_ARGUMENT (a token outside the vocabulary, n_tokens < 1),
 * H2O_ERR_CONTEXT_FULL, H2O_ERR_EVAL. */
H2O_API int h2o_session_eval(h2o_session *session, const int32_t *tokens, int32_t n_tokens,
                             bool all_logits);

/* Row i of the logits of the last eval ([n_vocab] floats): 0..n-1 after an
 * all_logits eval of n tokens, -1 for the last row. NULL when there is no
 * such row. Valid until the session's next eval, reset or free. */
H2O_API const float *h2o_session_logits(const h2o_session *session, int32_t i);

H2O_API int32_t h2o_session_n_past(const h2o_session *session); /* positions fed */
H2O_API int32_t h2o_session_n_ctx(const h2o_session *session);
/* Forgets the sequence (the cache empties; buffers stay allocated). */
H2O_API void h2o_session_reset(h2o_session *session);

/* The per-token negative log-likelihood of tokens[1..n-1], each given the
 * tokens before it, fed through the session one chunk at a time after what
 * it already holds (as `h2o perplexity` does with --chunk). nll must hold
 * n_tokens - 1 values. Errors as h2o_session_eval. */
H2O_API int h2o_session_score(h2o_session *session, const int32_t *tokens, int32_t n_tokens,
                              double *nll);

/* What the session's KV cache holds and costs. */
typedef struct h2o_kv_stats {
  int32_t n_layer;        /* layers with a cache */
  int32_t n_head_kv;      /* KV heads per layer */
  int32_t budget;         /* tokens a global layer's head keeps (n_ctx for full) */
  int64_t tokens_kept;    /* held now, summed over every (layer, KV head) */
  int32_t min_head_kept;  /* the fewest any (layer, KV head) holds */
  int32_t max_head_kept;  /* the most */
  size_t allocated_bytes; /* K/V rows and bookkeeping, allocated up front */
  /* What a full cache holding every position fed so far would need,
   * counted the same way. */
  size_t full_cache_bytes;
  /* The resolved policy, e.g. "h2o:heavy=51,recent=51" (NUL terminated,
   * cut to fit). */
  char policy[128];
} h2o_kv_stats;

H2O_API int h2o_session_kv_stats(const h2o_session *session, h2o_kv_stats *out);

/* ---- sampling and generation ------------------------------------------ */

typedef struct h2o_sampler_params {
  float temperature;    /* <= 0: greedy (default 0.8) */
  int32_t top_k;        /* <= 0: all tokens (default 40) */
  float top_p;          /* >= 1: off (default 0.95) */
  float min_p;          /* <= 0: off (default) */
  float repeat_penalty; /* 1: off (default) */
  int32_t repeat_last_n;/* default 64 */
  uint64_t seed;        /* the same seed gives the same tokens everywhere */
} h2o_sampler_params;

H2O_API h2o_sampler_params h2o_sampler_default_params(void);
/* Greedy: temperature 0. */
H2O_API h2o_sampler_params h2o_sampler_greedy_params(void);

/* A sampler (llama.cpp's order: repeat penalty, top-k, top-p, min-p,
 * temperature). One thread at a time. NULL params: defaults. */
H2O_API int h2o_sampler_create(const h2o_sampler_params *params, h2o_sampler **out);
H2O_API void h2o_sampler_free(h2o_sampler *sampler);
/* The next token from n_vocab logits (e.g. h2o_session_logits(s, -1));
 * -1 on a NULL argument. */
H2O_API int32_t h2o_sampler_sample(h2o_sampler *sampler, const float *logits, int32_t n_vocab);
/* Records a token of the sequence for the repeat penalty. */
H2O_API void h2o_sampler_accept(h2o_sampler *sampler, int32_t token);

typedef struct h2o_generate_params {
  int32_t max_tokens;       /* most tokens to generate (default 128) */
  bool stop_at_eog;         /* end at an end-of-generation token (default true) */
  h2o_sampler_params sampling; /* default: greedy */
} h2o_generate_params;

H2O_API h2o_generate_params h2o_generate_default_params(void);

/* Resets the session, feeds the prompt, then samples and feeds one token at
 * a time until max_tokens, or an end-of-generation token (not kept) when
 * stop_at_eog: the loop `h2o generate` runs. Writes at most n_out_max ids
 * to out and their count to *n_out (both may be NULL/0 to discard).
 * Errors: those of h2o_session_eval (an empty prompt is INVALID_ARGUMENT),
 * H2O_ERR_BUFFER_TOO_SMALL when more were generated than out holds (the
 * first n_out_max are written and *n_out is the full count). */
H2O_API int h2o_generate(h2o_session *session, const int32_t *prompt, int32_t n_prompt,
                         const h2o_generate_params *params, int32_t *out, int32_t n_out_max,
                         int32_t *n_out);

#ifdef __cplusplus
}
#endif

#endif /* H2O_H */
