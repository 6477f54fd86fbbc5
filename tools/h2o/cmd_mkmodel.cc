// h2o mkmodel: a random-weight GGUF with a real model's shape, for
// benchmarks without downloading weights.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_common.h"
#include "cli_log.h"
#include "commands.h"
#include "convert/mkmodel.h"
#include "model/arch.h"

namespace h2o::cli {

Command RegisterMkModel(CLI::App& app) {
  auto o = std::make_shared<MkModelOptions>();
  CLI::App* cmd = app.add_subcommand(
      "mkmodel", "write a random-weight GGUF model of a given shape (defaults: TinyLlama-1.1B)");
  cmd->add_option("--arch", o->arch, "architecture: " + ArchNames())->capture_default_str();
  cmd->add_option("--dim", o->n_embd, "embedding length")->capture_default_str();
  cmd->add_option("--layers", o->n_layer, "blocks")->capture_default_str();
  cmd->add_option("--heads", o->n_head, "attention heads")->capture_default_str();
  cmd->add_option("--kv-heads", o->n_head_kv, "KV heads (GQA)")->capture_default_str();
  cmd->add_option("--ffn", o->n_ff, "feed-forward length")->capture_default_str();
  auto* vocab =
      cmd->add_option("--vocab", o->n_vocab, "vocabulary size (>= 259)")->capture_default_str();
  cmd->add_option("--ctx", o->n_ctx, "context length")->capture_default_str();
  cmd->add_option("--type", o->type, "matrix type: " + MkModelTypeNames())->capture_default_str();
  cmd->add_option("--head-dim", o->head_dim,
                  "head width (attention.key_length; default: --dim / --heads)");
  cmd->add_option("--rope-base", o->rope_base, "RoPE frequency base")->capture_default_str();
  cmd->add_option("--rope-scaling", o->rope_scaling, "context extension: linear or yarn");
  cmd->add_option("--rope-factor", o->rope_factor, "context extension factor")
      ->capture_default_str();
  cmd->add_option("--rope-orig-ctx", o->rope_orig_ctx,
                  "context the extension starts from (default: --ctx)");
  cmd->add_option("--rope-freqs", o->rope_freqs,
                  "llama3: Llama 3.1's rope_freqs.weight (llama); longrope: synthetic "
                  "rope_factors_long/short.weight (phi3)");
  cmd->add_option("--rope-dims", o->rope_dims,
                  "rotated dims per head (default: all; gptneox: a quarter)");
  cmd->add_option("--window", o->window,
                  "gemma3: attention.sliding_window (every sixth layer stays global)");
  cmd->add_option("--norm-std", o->norm_std, "norm weights are 1 + noise of this std")
      ->capture_default_str();
  cmd->add_option("--sharpen", o->sharpen,
                  "scale the output matrix, so the top logits stand apart (stable greedy ids)")
      ->capture_default_str();
  cmd->add_flag("--tied", o->tied, "no output.weight: the output reuses token_embd (Llama 3.2)");
  auto* vocab_from = cmd->add_option("--vocab-from", o->vocab_from,
                                     "copy the tokenizer of this GGUF (model or vocab-only)");
  cmd->add_option("--seed", o->seed, "weights seed")->capture_default_str();
  cmd->add_option("--name", o->name, "general.name (default: derived from the shape)");
  cmd->add_option("-t,--threads", o->n_threads, "generating threads (0: all)")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output_path, "output GGUF file")->required();
  vocab_from->excludes(vocab);
  return {cmd, [o] {
            const Status check = CheckMkModelOptions(*o);
            if (!check.ok()) return Fail(check);
            const auto start = std::chrono::steady_clock::now();
            const Result<MkModelSize> written = MakeRandomModel(*o);
            if (!written.ok()) return Fail(written.status());
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const MkModelSize size = written.value();
            const double params = static_cast<double>(size.n_params);
            const std::string params_text = params >= 1e9   ? fmt::format("{:.2f}B", params * 1e-9)
                                            : params >= 1e6 ? fmt::format("{:.1f}M", params * 1e-6)
                                                            : fmt::format("{:.1f}K", params * 1e-3);
            Note("wrote {}: {}, {} params, {}, {} of weights in {:.1f} s", o->output_path,
                 o->arch, params_text, o->type, FormatBytes(static_cast<double>(size.data_bytes)),
                 seconds);
            return 0;
          }};
}

}  // namespace h2o::cli
