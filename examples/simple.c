/* Greedy generation through the C interface: prints the prompt's ids and
 * the generated ones, as `h2o generate --temp 0 --print-ids` does.
 *   simple_c MODEL PROMPT N [KV]   e.g. simple_c m.gguf "Once upon a time" 32 h2o:heavy=8,recent=8 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <h2o/h2o.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL PROMPT N [KV]\n", argv[0]);
    return 2;
  }
  h2o_model *model = NULL;
  if (h2o_model_load(argv[1], NULL, &model) != H2O_OK) {
    fprintf(stderr, "error: %s\n", h2o_last_error());
    return 1;
  }
  const size_t len = strlen(argv[2]);
  int32_t *prompt = malloc((len + 2) * sizeof *prompt);
  const int32_t n_prompt = h2o_tokenize(model, argv[2], len, prompt, (int32_t)len + 2, true);
  h2o_session_params sp = h2o_session_default_params();
  sp.kv = argc > 4 ? argv[4] : "full";
  h2o_session *session = NULL;
  int rc = n_prompt < 1 ? H2O_ERR_INVALID_ARGUMENT : h2o_session_create(model, &sp, &session);
  h2o_generate_params gp = h2o_generate_default_params(); /* greedy */
  gp.max_tokens = atoi(argv[3]);
  int32_t *out = malloc(((size_t)gp.max_tokens + 1) * sizeof *out);
  int32_t n_out = 0;
  if (rc == H2O_OK) rc = h2o_generate(session, prompt, n_prompt, &gp, out, gp.max_tokens, &n_out);
  if (rc == H2O_OK) {
    for (int32_t i = 0; i < n_prompt; ++i) printf(i ? " %d" : "%d", prompt[i]);
    for (int32_t i = 0; i < n_out; ++i) printf(" %d", out[i]);
    printf("\n");
    h2o_kv_stats kv;
    h2o_session_kv_stats(session, &kv);
    fprintf(stderr, "KV (%s): %zu bytes allocated, a full cache of %d tokens needs %zu\n",
            kv.policy, kv.allocated_bytes, h2o_session_n_past(session), kv.full_cache_bytes);
  } else {
    fprintf(stderr, "error: %s\n", h2o_last_error());
  }
  free(out);
  free(prompt);
  h2o_session_free(session);
  h2o_model_free(model);
  return rc == H2O_OK ? 0 : 1;
}
