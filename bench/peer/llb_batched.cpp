// llb_batched: llama.cpp's side of `h2o bench --concurrency`, on the public
// llama.h API of the peer build (../shared/peer, b7847), in the manner of
// upstream's llama-batched-bench (which the peer does not vendor):
//
//   llb_batched -m M -t 2 -npl N -npp P -ntg G [-fa on|off] [-ub 512] [-kvu 0|1]
//
// N sequences of P random prompt tokens (BOS first) share one context of
// N * (P + G) cells (llama.cpp has no eviction: every sequence keeps all
// its tokens), split into one stream per sequence (-kvu 0, the default:
// each attends over its own cells) or one unified pool (-kvu 1: every
// sequence's attention spans all cells, masked). The prompts are decoded in batches of up to -ub tokens,
// then G steps each decode one token of every sequence (greedy, logits of
// all N rows), as a server's decode steps would. Prints one JSON line:
// KV bytes per sequence and in all (the K/V cells the context allocates),
// prefill seconds, decode seconds and aggregate decode tok/s (N * G over
// the decode steps).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "llama.h"

namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "llb_batched: error: %s\n", message.c_str());
  std::exit(1);
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void Quiet(enum ggml_log_level, const char*, void*) {}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  int threads = 2, npl = 1, npp = 512, ntg = 128, ubatch = 512;
  bool flash = true, unified = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + a);
      return argv[++i];
    };
    if (a == "-m") {
      model_path = next();
    } else if (a == "-t") {
      threads = std::atoi(next().c_str());
    } else if (a == "-npl") {
      npl = std::atoi(next().c_str());
    } else if (a == "-npp") {
      npp = std::atoi(next().c_str());
    } else if (a == "-ntg") {
      ntg = std::atoi(next().c_str());
    } else if (a == "-ub") {
      ubatch = std::atoi(next().c_str());
    } else if (a == "-kvu") {
      unified = next() == "1";
    } else if (a == "-fa") {
      flash = next() == "on";
    } else {
      Die("unknown argument " + a);
    }
  }
  if (model_path.empty() || npl < 1 || npp < 1 || ntg < 1 || threads < 1 || ubatch < 1) {
    Die("usage: llb_batched -m M -t 2 -npl N -npp P -ntg G [-fa on|off] [-ub 512]");
  }
  llama_log_set(Quiet, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model* model = llama_model_load_from_file(model_path.c_str(), mp);
  if (model == nullptr) Die("cannot load " + model_path);
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const int n_vocab = llama_vocab_n_tokens(vocab);

  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(npl) * (npp + ntg);
  cp.n_seq_max = static_cast<uint32_t>(npl);
  cp.n_batch = static_cast<uint32_t>(std::max(ubatch, npl));
  cp.n_ubatch = cp.n_batch;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.flash_attn_type = flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.kv_unified = unified;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) Die("cannot create a context of " + std::to_string(cp.n_ctx) + " cells");

  std::srand(1);
  llama_batch batch = llama_batch_init(static_cast<int32_t>(cp.n_batch), 0, 1);
  auto add = [&](llama_token id, llama_pos pos, llama_seq_id seq, bool logits) {
    const int i = batch.n_tokens++;
    batch.token[i] = id;
    batch.pos[i] = pos;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = seq;
    batch.logits[i] = logits;
  };
  auto decode = [&] {
    if (llama_decode(ctx, batch) != 0) Die("llama_decode failed");
    llama_synchronize(ctx);
  };

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<llama_token> next(static_cast<size_t>(npl));
  for (int s = 0; s < npl; ++s) {
    for (int begin = 0; begin < npp; begin += static_cast<int>(cp.n_batch)) {
      const int end = std::min(npp, begin + static_cast<int>(cp.n_batch));
      batch.n_tokens = 0;
      for (int p = begin; p < end; ++p) {
        const llama_token id = p == 0 ? llama_vocab_bos(vocab) : std::rand() % n_vocab;
        add(id, p, s, p == npp - 1);
      }
      decode();
    }
    const float* logits = llama_get_logits_ith(ctx, batch.n_tokens - 1);
    next[s] = static_cast<llama_token>(std::max_element(logits, logits + n_vocab) - logits);
  }
  const auto t1 = std::chrono::steady_clock::now();
  for (int step = 0; step < ntg; ++step) {
    batch.n_tokens = 0;
    for (int s = 0; s < npl; ++s) add(next[s], npp + step, s, true);
    decode();
    for (int s = 0; s < npl; ++s) {
      const float* logits = llama_get_logits_ith(ctx, s);
      next[s] = static_cast<llama_token>(std::max_element(logits, logits + n_vocab) - logits);
    }
  }
  const auto t2 = std::chrono::steady_clock::now();

  // K and V rows of every layer, f16 (the default cache type).
  const double per_token = 2.0 * 2.0 * llama_model_n_layer(model) *
                           (static_cast<double>(llama_model_n_embd(model)) /
                            llama_model_n_head(model) * llama_model_n_head_kv(model));
  const double decode_s = Seconds(t1, t2);
  std::printf(
      "{\"engine\": \"llama.cpp\", \"npl\": %d, \"npp\": %d, \"ntg\": %d, \"threads\": %d, "
      "\"fa\": \"%s\", \"kv_unified\": %s, \"kv_bytes_per_sequence\": %.0f, \"kv_bytes\": %.0f, \"prefill_s\": %.3f, "
      "\"decode_s\": %.3f, \"decode_tps\": %.2f}\n",
      npl, npp, ntg, threads, flash ? "on" : "off", unified ? "true" : "false", per_token * (npp + ntg),
      per_token * cp.n_ctx, Seconds(t0, t1), decode_s, npl * ntg / decode_s);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
